//! A part of the capture: what the packets a report selects (a display filter,
//! a time window) counted, session by session.
//!
//! The engine still analyses every packet: a gap, a resend or an ack delay
//! needs what came before the part. The window adds up, for each selected
//! packet, what analysing it changed in its session's counters (messages and
//! their bytes, first sends, repeats, resends, malformed reasons, the loss
//! estimate): [`Window::before`] takes them before the engine sees the packet,
//! [`Window::after`] takes the difference. The rest comes from the packet
//! itself (its length and time, the ack delays it measured, in
//! [`PacketEvent::ack_samples`]) and from the findings the caller selected
//! ([`Window::finding`]). So a window over the whole capture gives the
//! figures of the whole report, and two windows that split it add up to it.
//!
//! What is a state rather than a count is taken as the part leaves it: the
//! jitter is the one after its last packet, and a reliable message is
//! unacked when a selected packet carried it and no ack came by the end.
//!
//! Memory is bounded: [`MAX_SESSIONS`] sessions are followed one by one, the
//! others together per protocol (as evicted sessions are in the engine).

use super::session::{DirState, MAX_MALFORMED, MAX_MESSAGE_TYPES};
use super::summary::{DirectionSummary, EvictedTotals, SessionSummary, Summary};
use super::tracker::add_into;
use super::{
    Direction, Engine, Finding, LossEstimate, PacketEvent, ProtocolInfo, SessionId, SessionRef,
};
use rustc_hash::FxHashMap;

/// Sessions a window follows one by one.
pub const MAX_SESSIONS: usize = 4096;

/// What analysing a packet may change in a direction, taken before it.
#[derive(Debug, Clone, Copy)]
struct Counters {
    messages: [u64; MAX_MESSAGE_TYPES],
    message_bytes: [u64; MAX_MESSAGE_TYPES],
    malformed: [u64; MAX_MALFORMED],
    first_sends: u64,
    resends: u64,
    repeats: u64,
    expected_repeats: u64,
    /// The protocol's own loss count; the sender's cadence is followed gap
    /// by gap instead (`cadence_gaps`), its estimate made once at the end.
    proto_loss: Option<LossEstimate>,
    cadence_gaps: u64,
    /// Whether the sender's periodic stream had begun.
    cadence_started: bool,
    /// The packets the cadence counted back ([`super::Cadence::late`]).
    cadence_late: u64,
}

impl Counters {
    const ZERO: Counters = Counters {
        messages: [0; MAX_MESSAGE_TYPES],
        message_bytes: [0; MAX_MESSAGE_TYPES],
        malformed: [0; MAX_MALFORMED],
        first_sends: 0,
        resends: 0,
        repeats: 0,
        expected_repeats: 0,
        proto_loss: None,
        cadence_gaps: 0,
        cadence_started: false,
        cadence_late: 0,
    };

    fn of(d: &DirState) -> Self {
        Counters {
            messages: d.messages,
            message_bytes: d.message_bytes,
            malformed: d.malformed,
            first_sends: d.first_sends,
            resends: d.resends,
            repeats: d.repeats,
            expected_repeats: d.expected_repeats,
            proto_loss: d.proto_loss(),
            cadence_gaps: d.cadence.samples(),
            cadence_started: d.cadence.started(),
            cadence_late: d.cadence.late(),
        }
    }

    /// Adds to `to` what `after` counts beyond these.
    fn add_change(&self, after: &DirState, to: &mut DirState) {
        fn add<const N: usize>(to: &mut [u64; N], after: &[u64; N], before: &[u64; N]) {
            for ((t, a), b) in to.iter_mut().zip(after).zip(before) {
                *t += a.saturating_sub(*b);
            }
        }
        add(&mut to.messages, &after.messages, &self.messages);
        add(
            &mut to.message_bytes,
            &after.message_bytes,
            &self.message_bytes,
        );
        add(&mut to.malformed, &after.malformed, &self.malformed);
        to.first_sends += after.first_sends.saturating_sub(self.first_sends);
        to.resends += after.resends.saturating_sub(self.resends);
        to.repeats += after.repeats.saturating_sub(self.repeats);
        to.expected_repeats += after.expected_repeats.saturating_sub(self.expected_repeats);
        if let Some(a) = after.proto_loss() {
            let b = self.proto_loss.unwrap_or_default();
            to.count_expected(a.expected.saturating_sub(b.expected));
            to.count_lost(a.lost.saturating_sub(b.lost));
        }
        if after.cadence.samples() > self.cadence_gaps {
            to.cadence.sample(after.cadence.last_ms());
        }
        to.cadence
            .add_late(after.cadence.late().saturating_sub(self.cadence_late));
    }

    /// Whether the packet counted began the sender's periodic stream (the
    /// one before its first gap).
    fn first_of(&self, after: &DirState) -> bool {
        !self.cadence_started && after.cadence.started()
    }
}

/// One session's part: its directions as the selected packets counted them.
#[derive(Debug, Default)]
struct Part {
    /// Known from its first selected packet (a session seen only through a
    /// finding selected on its own learns it at the end).
    protocol: Option<&'static ProtocolInfo>,
    dirs: [DirState; 2],
    /// Whether each direction's first packet of the sender's periodic stream
    /// was selected (it starts the sender's cadence: the packets expected
    /// count it beside the gaps).
    first: [bool; 2],
    /// Whether the session's latest packet was selected: what the end of the
    /// capture changes in its counters (a protocol's count of lost packets)
    /// then counts too, so windows that split a capture add up to it.
    last_selected: bool,
}

/// The sessions beyond [`MAX_SESSIONS`], of one protocol, together.
#[derive(Debug)]
struct Overflow {
    /// `None` for sessions known only by findings selected on their own.
    protocol: Option<&'static ProtocolInfo>,
    sessions: u64,
    part: Part,
}

/// The packet between [`Window::before`] and [`Window::after`].
#[derive(Debug, Clone, Copy)]
struct Pending {
    session: SessionId,
    direction: Direction,
}

/// What the selected packets of a capture counted.
#[derive(Debug, Default)]
pub struct Window {
    parts: FxHashMap<SessionId, Part>,
    /// Sessions counted in `overflow`.
    overflowed: FrameSet,
    overflow: Vec<Overflow>,
    /// The counters of the session of the packet about to be analysed.
    before: Option<(SessionId, [Counters; 2])>,
    pending: Option<Pending>,
    /// At the end of the capture, the counters of the sessions whose latest
    /// packet was selected, before the engine ends them.
    ending: Vec<(SessionId, [Counters; 2])>,
}

/// A window's counts, ready for a report.
#[derive(Debug, Clone, Default)]
pub struct WindowSummary {
    /// As [`Engine::summary`] gives it, of the selected packets only; sessions
    /// without any are left out, and `evicted` holds those the window (or the
    /// engine) no longer follows one by one.
    pub summary: Summary,
    /// Messages by type, per protocol.
    pub messages_by_protocol: Vec<super::ProtocolMessages>,
}

impl Window {
    pub fn new() -> Self {
        Self::default()
    }

    /// Before the engine analyses a packet: the counters of the session it
    /// belongs to, if the engine keeps one ([`Engine::session_for`]).
    pub fn before(&mut self, session: Option<SessionRef<'_>>) {
        self.pending = None;
        self.before = session.map(|s| (s.id, [Counters::of(s.c2s), Counters::of(s.s2c)]));
        if let Some((id, _)) = self.before
            && let Some(part) = self.parts.get_mut(&id)
        {
            part.last_selected = false;
        }
    }

    /// Before the engine ends the capture ([`Engine::finish`]).
    pub fn end_begins(&mut self, engine: &Engine) {
        let mut ending = std::mem::take(&mut self.ending);
        ending.clear();
        engine.for_each_session(|s| {
            if self.parts.get(&s.id).is_some_and(|p| p.last_selected) {
                ending.push((s.id, [Counters::of(s.c2s), Counters::of(s.s2c)]));
            }
        });
        self.ending = ending;
    }

    /// After the engine ended the capture: what ending the sessions whose
    /// latest packet was selected changed in their counters.
    pub fn end_done(&mut self, engine: &Engine) {
        for (id, before) in std::mem::take(&mut self.ending) {
            let (Some(s), Some(part)) = (engine.session(id), self.parts.get_mut(&id)) else {
                continue;
            };
            for (i, dir) in [s.c2s, s.s2c].into_iter().enumerate() {
                before[i].add_change(dir, &mut part.dirs[i]);
            }
        }
    }

    /// A selected packet, as the engine reports it.
    pub fn packet(&mut self, e: &PacketEvent<'_>) {
        self.pending = Some(Pending {
            session: e.session,
            direction: e.direction,
        });
        let part = self.part_mut(e.session, Some(e.protocol));
        part.dirs[e.direction.index()].count_packet(e.datagram.ts, e.datagram.payload_len);
        for (dir, samples) in part.dirs.iter_mut().zip(e.ack_samples) {
            for &delay in samples {
                dir.add_ack_delay(delay);
            }
        }
    }

    /// After the engine analysed the packet: when it was selected, what it
    /// changed in its session's counters. `session`: the packet's session as
    /// the engine now keeps it.
    pub fn after(&mut self, session: Option<SessionRef<'_>>) {
        let (Some(p), Some(s)) = (self.pending.take(), session) else {
            return;
        };
        if s.id != p.session {
            return;
        }
        let before = match self.before.take() {
            Some((id, counters)) if id == s.id => counters,
            // A new session (or a new one on the same ports): from nothing.
            _ => [Counters::ZERO; 2],
        };
        let jitter = s.dir(p.direction).jitter_ms;
        let part = self.part_mut(s.id, Some(s.protocol));
        for (i, dir) in [s.c2s, s.s2c].into_iter().enumerate() {
            before[i].add_change(dir, &mut part.dirs[i]);
            part.first[i] |= before[i].first_of(dir);
        }
        part.dirs[p.direction.index()].jitter_ms = jitter;
        part.last_selected = true;
    }

    /// Once the capture has ended: the loss each part's directions estimate
    /// from the sender's cadence, their own gaps judged by the tick of the
    /// whole direction (a protocol's own loss count was taken as it went).
    pub fn settle(&mut self, engine: &Engine) {
        let parts = &mut self.parts;
        engine.for_each_session(|s| {
            let Some(part) = parts.get_mut(&s.id) else {
                return;
            };
            for (i, whole) in [s.c2s, s.s2c].into_iter().enumerate() {
                let dir = &mut part.dirs[i];
                if whole.proto_loss().is_some() || dir.proto_loss().is_some() {
                    continue;
                }
                if let Some(tick) = whole.cadence.tick_ms() {
                    let e = dir.cadence.estimate_with(tick, part.first[i]);
                    dir.count_expected(e.expected);
                    dir.count_lost(e.lost);
                }
            }
        });
    }

    /// A selected finding: counted in its session and direction.
    pub fn finding(&mut self, f: &Finding) {
        let part = self.part_mut(f.session, None);
        let dir = &mut part.dirs[f.direction.index()];
        if let Some(slot) = dir.findings.get_mut(f.kind.ordinal()) {
            *slot += f.numbers();
        }
        if let Some(rule) = f.rule
            && let Some(slot) = dir.violations.get_mut(rule.ordinal())
        {
            *slot += 1;
        }
    }

    /// The session's directions as the window counted them, when it follows
    /// the session one by one.
    pub fn directions(&self, id: SessionId) -> Option<[&DirState; 2]> {
        self.parts.get(&id).map(|p| [&p.dirs[0], &p.dirs[1]])
    }

    /// Whether any selected packet or finding concerned the session.
    pub fn has(&self, id: SessionId) -> bool {
        self.parts.contains_key(&id)
    }

    fn part_mut(&mut self, id: SessionId, protocol: Option<&'static ProtocolInfo>) -> &mut Part {
        let follow = self.parts.contains_key(&id)
            || (self.parts.len() < MAX_SESSIONS && !self.overflowed.contains(id as u64));
        if follow {
            let part = self.parts.entry(id).or_default();
            if part.protocol.is_none() {
                part.protocol = protocol;
            }
            return part;
        }
        // Beyond the bound: with the others of its protocol.
        let fresh = !self.overflowed.contains(id as u64);
        if fresh {
            self.overflowed.insert(id as u64);
        }
        let same = |o: &Overflow| match (o.protocol, protocol) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        let at = match self.overflow.iter().position(same) {
            Some(at) => at,
            None => {
                self.overflow.push(Overflow {
                    protocol,
                    sessions: 0,
                    part: Part {
                        protocol,
                        ..Part::default()
                    },
                });
                self.overflow.len() - 1
            }
        };
        let o = &mut self.overflow[at];
        if fresh {
            o.sessions += 1;
        }
        &mut o.part
    }

    /// The window's counts at the end of the capture.
    pub fn summary(&self, engine: &Engine) -> WindowSummary {
        // Sessions still kept by the engine, listed; the others folded.
        let mut kept = FxHashMap::default();
        engine.for_each_session(|s| {
            if self.parts.contains_key(&s.id) {
                kept.insert(s.id, (s.protocol, s.client, s.server, s.state));
            }
        });
        // As the engine lists them: by protocol, each in the order first seen.
        let order: Vec<&'static ProtocolInfo> = engine.protocols().collect();
        let rank = |p: Option<&'static ProtocolInfo>| {
            p.and_then(|p| order.iter().position(|q| std::ptr::eq(*q, p)))
                .unwrap_or(order.len())
        };
        let mut ids: Vec<(usize, SessionId)> = self
            .parts
            .iter()
            .map(|(id, p)| (rank(p.protocol.or(kept.get(id).map(|k| k.0))), *id))
            .collect();
        ids.sort_unstable();
        // Totals per protocol, in the order protocols first appear.
        let mut totals: Vec<(&'static ProtocolInfo, DirState)> = Vec::new();
        let mut total_of = |p: &'static ProtocolInfo| -> usize {
            match totals.iter().position(|(q, _)| std::ptr::eq(*q, p)) {
                Some(i) => i,
                None => {
                    totals.push((p, DirState::default()));
                    totals.len() - 1
                }
            }
        };
        let mut sessions = Vec::new();
        let mut evicted = EvictedTotals::default();
        let mut to_add: Vec<(usize, &DirState)> = Vec::new();
        for (_, id) in ids {
            let part = &self.parts[&id];
            let s = kept.get(&id);
            let Some(protocol) = part.protocol.or(s.map(|s| s.0)) else {
                evicted.sessions += 1;
                continue;
            };
            let t = total_of(protocol);
            to_add.extend(part.dirs.iter().map(|d| (t, d)));
            match s {
                Some(&(_, client, server, state)) => sessions.push(SessionSummary {
                    client: client.to_string(),
                    server: server.to_string(),
                    state: state.to_owned(),
                    c2s: part.dirs[0].summary(protocol),
                    s2c: part.dirs[1].summary(protocol),
                }),
                None => fold(&mut evicted, 1, part),
            }
        }
        for o in &self.overflow {
            if let Some(protocol) = o.protocol {
                let t = total_of(protocol);
                to_add.extend(o.part.dirs.iter().map(|d| (t, d)));
            }
            fold(&mut evicted, o.sessions, &o.part);
        }
        for (t, d) in to_add {
            add_into(&mut totals[t].1, d);
        }
        totals.sort_by_key(|(p, _)| rank(Some(*p)));
        let (mut summary, messages_by_protocol) = totals_summary(&totals);
        summary.sessions = sessions;
        if evicted.sessions > 0 {
            summary.evicted = Some(evicted);
        }
        WindowSummary {
            summary,
            messages_by_protocol,
        }
    }

    /// Reliable messages a selected packet of the session carried that were
    /// never acked, by direction.
    pub fn unacked(s: SessionRef<'_>, selected: &dyn Fn(u64) -> bool) -> [usize; 2] {
        [s.c2s, s.s2c].map(|d| d.seq.unacked_frames().filter(|&f| selected(f)).count())
    }
}

/// Folds a part no longer listed (its session evicted, or beyond the
/// window's bound) into the totals of evicted sessions: the worst-of metrics
/// of parts held together are those of their sum.
fn fold(into: &mut EvictedTotals, sessions: u64, part: &Part) {
    let mut e = EvictedTotals {
        sessions,
        ..EvictedTotals::default()
    };
    for d in &part.dirs {
        e.packets += d.packets;
        e.first_sends += d.first_sends;
        e.repeats += d.repeats;
        e.resends += d.resends;
        e.fold_direction(d);
    }
    into.add(&e);
}

/// A set of frame numbers (or other dense numbers, session ids), one bit
/// each: what a filter selected, for the findings that come later with
/// those frames.
#[derive(Debug, Default)]
pub struct FrameSet(Vec<u64>);

impl FrameSet {
    pub fn contains(&self, n: u64) -> bool {
        let word = usize::try_from(n / 64).unwrap_or(usize::MAX);
        self.0.get(word).is_some_and(|w| w & (1 << (n % 64)) != 0)
    }

    pub fn insert(&mut self, n: u64) {
        let word = usize::try_from(n / 64).unwrap_or(usize::MAX);
        if word >= self.0.len() && word < usize::MAX / 2 {
            self.0.resize((word + 1).next_power_of_two(), 0);
        }
        if let Some(w) = self.0.get_mut(word) {
            *w |= 1 << (n % 64);
        }
    }
}

/// The counts of every protocol's totals, in their order, as one summary,
/// and each protocol's message counts and bytes.
fn totals_summary(
    totals: &[(&'static ProtocolInfo, DirState)],
) -> (Summary, Vec<super::ProtocolMessages>) {
    let mut summary = Summary::default();
    let mut messages_by_protocol = Vec::new();
    for (protocol, total) in totals {
        let message_bytes = total.message_byte_counts(protocol);
        let DirectionSummary {
            messages,
            findings,
            violations,
            malformed,
            ..
        } = total.summary(protocol);
        if !messages.is_empty() {
            messages_by_protocol.push(super::ProtocolMessages {
                protocol,
                counts: messages.clone(),
                bytes: message_bytes.clone(),
            });
        }
        summary.merge(Summary {
            messages,
            message_bytes,
            findings,
            violations,
            malformed,
            ..Summary::default()
        });
    }
    (summary, messages_by_protocol)
}
