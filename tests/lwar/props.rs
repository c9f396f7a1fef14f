//! Property tests of the codec: encode -> decode round trips for arbitrary
//! messages, no panic and coherent errors on arbitrary bytes, exact truncation
//! errors when a valid packet is cut at any length, the violations the fields
//! imply, and the packet builder's delivery rules.

use lwarscope::proto::lwar::wire::{
    Collision, DecodeError, Header, Id, Input, MAX_PACKET_SIZE, Message, MessageRepr, MessageType,
    Packet, PacketBuilder, PacketRepr, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
    UpdateRayEntry, Violation,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::Union;

// ---------------------------------------------------------------------------
// Strategies: one per `MessageRepr` variant
// ---------------------------------------------------------------------------

fn id() -> impl Strategy<Value = Id> {
    any::<(u16, u16)>().prop_map(|(generation, index)| Id { generation, index })
}

/// Any string the wire can carry (at most 255 bytes): raw bytes of any kind, or
/// valid UTF-8 with multi-byte characters, at times around the name limit.
fn string() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..=255),
        "\\PC{0,60}".prop_map(String::into_bytes),
        vec(b'a'..=b'z', 30..=33),
    ]
}

fn header() -> impl Strategy<Value = Header> {
    any::<(u32, u32)>().prop_map(|(ack, timestamp)| Header { ack, timestamp })
}

fn stats_entry() -> impl Strategy<Value = StatsEntry> {
    (id(), any::<(u16, u16, u16)>()).prop_map(|(player, (kills, deaths, ping))| StatsEntry {
        player,
        kills,
        deaths,
        ping,
    })
}

fn update_entry() -> impl Strategy<Value = UpdateEntry> {
    (id(), any::<(i16, i16, u16, u8)>()).prop_map(|(entity, (x, y, orientation, health))| {
        UpdateEntry {
            entity,
            x,
            y,
            orientation,
            health,
        }
    })
}

fn update_pos_entry() -> impl Strategy<Value = UpdatePosEntry> {
    (id(), any::<(i16, i16)>()).prop_map(|(entity, (x, y))| UpdatePosEntry { entity, x, y })
}

fn update_ray_entry() -> impl Strategy<Value = UpdateRayEntry> {
    (id(), any::<(i16, i16, u16, u16)>()).prop_map(|(entity, (x, y, orientation, length))| {
        UpdateRayEntry {
            entity,
            x,
            y,
            orientation,
            length,
        }
    })
}

fn update_circle_entry() -> impl Strategy<Value = UpdateCircleEntry> {
    (id(), any::<(i16, i16, u16)>()).prop_map(|(entity, (x, y, radius))| UpdateCircleEntry {
        entity,
        x,
        y,
        radius,
    })
}

fn input() -> impl Strategy<Value = Input> {
    (
        id(),
        any::<u32>(),
        any::<[u8; 6]>(),
        any::<[u8; 4]>(),
        any::<(i16, i16)>(),
    )
        .prop_map(|(player, frame, k, shooting, (aim_x, aim_y))| Input {
            player,
            frame,
            forward: k[0],
            backward: k[1],
            turn_left: k[2],
            turn_right: k[3],
            strafe_left: k[4],
            strafe_right: k[5],
            shooting,
            aim_x,
            aim_y,
        })
}

fn collision() -> impl Strategy<Value = Collision> {
    (id(), id(), any::<(i16, i16)>()).prop_map(|(a, b, (x, y))| Collision {
        entities: [a, b],
        x,
        y,
    })
}

/// Seqnos anywhere in u32, 0 (a violation) and 1 included often enough.
fn seqno() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), any::<u32>()]
}

/// The ten reliable messages.
fn reliable() -> BoxedStrategy<MessageRepr> {
    Union::new(vec![
        (seqno(), string())
            .prop_map(|(seqno, name)| MessageRepr::Connect { seqno, name })
            .boxed(),
        seqno()
            .prop_map(|seqno| MessageRepr::Disconnect { seqno })
            .boxed(),
        (seqno(), id(), string())
            .prop_map(|(seqno, player, name)| MessageRepr::Join {
                seqno,
                player,
                name,
            })
            .boxed(),
        (seqno(), id())
            .prop_map(|(seqno, player)| MessageRepr::Leave { seqno, player })
            .boxed(),
        (seqno(), id(), string())
            .prop_map(|(seqno, player, text)| MessageRepr::Chat {
                seqno,
                player,
                text,
            })
            .boxed(),
        (seqno(), id(), id(), any::<u8>())
            .prop_map(|(seqno, entity, player, type_id)| MessageRepr::Add {
                seqno,
                entity,
                player,
                type_id,
            })
            .boxed(),
        (seqno(), id())
            .prop_map(|(seqno, entity)| MessageRepr::Remove { seqno, entity })
            .boxed(),
        (seqno(), id(), any::<u8>(), any::<[u8; 4]>())
            .prop_map(
                |(seqno, player, ship_type, weapon_types)| MessageRepr::Selection {
                    seqno,
                    player,
                    ship_type,
                    weapon_types,
                },
            )
            .boxed(),
        (seqno(), id(), string())
            .prop_map(|(seqno, player, name)| MessageRepr::Name {
                seqno,
                player,
                name,
            })
            .boxed(),
        seqno()
            .prop_map(|seqno| MessageRepr::Synced { seqno })
            .boxed(),
    ])
    .boxed()
}

/// The number of entries of `entry_len` bytes that fit, with their message's two
/// header bytes, in one otherwise empty packet of 512 bytes.
const fn fitting(entry_len: usize) -> usize {
    (MAX_PACKET_SIZE - 12 - 2) / entry_len
}

/// The eight unreliable messages. Counted messages get up to `max_entries`
/// entries (at most 255, what the u8 count can say), and never more than fit in
/// a 512-byte packet when `fit` is set.
fn unreliable(fit: bool) -> BoxedStrategy<MessageRepr> {
    let n = |entry_len: usize| {
        if fit { 0..=fitting(entry_len) } else { 0..=255 }
    };
    Union::new(vec![
        vec(stats_entry(), n(10))
            .prop_map(MessageRepr::Stats)
            .boxed(),
        input().prop_map(MessageRepr::Input).boxed(),
        Just(MessageRepr::Full).boxed(),
        collision().prop_map(MessageRepr::Collision).boxed(),
        vec(update_entry(), n(11))
            .prop_map(MessageRepr::Update)
            .boxed(),
        vec(update_pos_entry(), n(8))
            .prop_map(MessageRepr::UpdatePos)
            .boxed(),
        vec(update_ray_entry(), n(12))
            .prop_map(MessageRepr::UpdateRay)
            .boxed(),
        vec(update_circle_entry(), n(10))
            .prop_map(MessageRepr::UpdateCircle)
            .boxed(),
    ])
    .boxed()
}

/// Any message of the 18 types.
fn message(fit: bool) -> BoxedStrategy<MessageRepr> {
    prop_oneof![10 => reliable(), 8 => unreliable(fit)].boxed()
}

/// A packet of up to `max` messages, with no size limit applied.
fn packet(fit: bool, max: usize) -> impl Strategy<Value = PacketRepr> {
    (header(), vec(message(fit), 0..=max))
        .prop_map(|(header, messages)| PacketRepr { header, messages })
}

/// Bytes a decoder may meet: random, random after a valid header, valid packets
/// with a few bytes changed, and chains of valid type ids with random bodies.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    let with_header = |body: Vec<u8>, h: Header| {
        let mut b = h.to_bytes().to_vec();
        b.extend(body);
        b
    };
    let type_ids: Vec<u8> = MessageType::ALL
        .iter()
        .map(|t| t.id())
        .chain([0, 11, 102, 114, 255])
        .collect();
    prop_oneof![
        vec(any::<u8>(), 0..64),
        (vec(any::<u8>(), 0..600), header()).prop_map(move |(b, h)| with_header(b, h)),
        (packet(true, 6), vec((any::<usize>(), any::<u8>()), 1..4)).prop_map(|(p, edits)| {
            let mut b = p.to_bytes();
            for (at, byte) in edits {
                let at = at % b.len();
                b[at] = byte;
            }
            b
        }),
        (
            vec(
                (proptest::sample::select(type_ids), vec(any::<u8>(), 0..24)),
                0..12
            ),
            header()
        )
            .prop_map(move |(chunks, h)| {
                let body = chunks
                    .into_iter()
                    .flat_map(|(t, rest)| std::iter::once(t).chain(rest))
                    .collect();
                with_header(body, h)
            }),
    ]
}

// ---------------------------------------------------------------------------
// Oracles written from the specification
// ---------------------------------------------------------------------------

/// Bytes of a message before its string or entries can be sized: its header, its
/// fixed fields and its length or count byte (from the specification's tables).
fn fixed_part(t: MessageType) -> usize {
    match t {
        MessageType::Connect => 1 + 4 + 1,
        MessageType::Disconnect | MessageType::Synced => 1 + 4,
        MessageType::Join | MessageType::Chat | MessageType::Name => 1 + 4 + 4 + 1,
        MessageType::Leave | MessageType::Remove => 1 + 4 + 4,
        MessageType::Add => 1 + 4 + 4 + 4 + 1,
        MessageType::Selection => 1 + 4 + 4 + 1 + 4,
        MessageType::Input => 1 + 4 + 4 + 6 + 4 + 2 + 2,
        MessageType::Full => 1,
        MessageType::Collision => 1 + 8 + 2 + 2,
        MessageType::Stats
        | MessageType::Update
        | MessageType::UpdatePos
        | MessageType::UpdateRay
        | MessageType::UpdateCircle => 1 + 1,
    }
}

/// The violations a message at `offset` must report, from its fields alone.
fn expected_violations(m: &MessageRepr, offset: usize) -> Vec<Violation> {
    let msg_type = m.msg_type();
    let mut v = Vec::new();
    if m.seqno() == Some(0) {
        v.push(Violation::SeqnoZero { offset, msg_type });
    }
    let string = match m {
        MessageRepr::Connect { name, .. }
        | MessageRepr::Join { name, .. }
        | MessageRepr::Name { name, .. } => Some(name),
        MessageRepr::Chat { text, .. } => Some(text),
        _ => None,
    };
    if let Some(s) = string {
        let len = s.len();
        if msg_type == MessageType::Chat && len >= 255 {
            v.push(Violation::ChatTooLong { offset, len });
        } else if msg_type != MessageType::Chat && len >= 32 {
            v.push(Violation::NameTooLong {
                offset,
                msg_type,
                len,
            });
        }
        if std::str::from_utf8(s).is_err() {
            v.push(Violation::InvalidUtf8 { offset, msg_type });
        }
    }
    v
}

/// Everything that must hold of any decode, whatever the bytes.
fn check_decode(bytes: &[u8]) -> Result<(), TestCaseError> {
    let packet = match Packet::new_checked(bytes) {
        Ok(p) => p,
        Err(e) => {
            prop_assert_eq!(e.offset(), 0);
            if bytes.len() < 12 {
                prop_assert_eq!(e, DecodeError::ShortHeader { len: bytes.len() });
            } else {
                let found = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                prop_assert_ne!(found, 0xf270_87c5);
                prop_assert_eq!(e, DecodeError::WrongAppId { found });
            }
            prop_assert_eq!(PacketRepr::parse(bytes), Err(e));
            let _ = e.to_string();
            return Ok(());
        }
    };
    prop_assert!(bytes.len() >= 12);
    prop_assert_eq!(packet.oversize().is_some(), bytes.len() > 512);
    let mut messages = packet.messages();
    let mut end = 12;
    let mut error = None;
    for item in messages.by_ref() {
        match item {
            Ok(view) => {
                prop_assert_eq!(view.offset, end, "messages are back to back");
                prop_assert!(!view.bytes.is_empty());
                prop_assert_eq!(view.bytes, &bytes[end..end + view.bytes.len()]);
                end += view.bytes.len();
                let original = MessageRepr::from(&view.message);
                prop_assert_eq!(
                    view.violations().collect::<Vec<_>>(),
                    expected_violations(&original, view.offset)
                );
                // The analysis asks `may_violate` first: it must not miss one.
                prop_assert!(view.may_violate() || view.violations().next().is_none());
                check_fields(&view)?;
                let line = view.to_string();
                prop_assert!(line.starts_with(&view.message.token().to_string()));
            }
            Err(e) => {
                prop_assert_eq!(
                    e.offset(),
                    end,
                    "the error is where the next message starts"
                );
                prop_assert!(e.offset() >= 12 && e.offset() < bytes.len());
                if let DecodeError::Truncated {
                    msg_type,
                    needed,
                    available,
                    ..
                } = e
                {
                    prop_assert_eq!(available, bytes.len() - end);
                    prop_assert!(needed > available);
                    prop_assert_eq!(bytes[end], msg_type.id());
                }
                let _ = e.to_string();
                error = Some(e);
            }
        }
    }
    match error {
        None => {
            prop_assert_eq!(end, bytes.len(), "every byte decoded");
            prop_assert_eq!(messages.undecoded(), None);
            let repr = PacketRepr::parse(bytes);
            prop_assert!(repr.is_ok());
            prop_assert_eq!(repr.unwrap().to_bytes(), bytes, "re-encodes exactly");
        }
        Some(e) => {
            prop_assert_eq!(
                messages.undecoded(),
                Some((e.offset(), &bytes[e.offset()..]))
            );
            prop_assert_eq!(PacketRepr::parse(bytes), Err(e));
        }
    }
    Ok(())
}

/// The leaves of the field tree tile the message exactly, in order.
fn check_fields(view: &lwarscope::proto::lwar::wire::MessageView<'_>) -> Result<(), TestCaseError> {
    let fields = view.fields();
    let whole = view.offset..view.offset + view.bytes.len();
    prop_assert_eq!(&fields[0].span, &whole);
    prop_assert_eq!(fields[0].depth, 0);
    let mut at = view.offset;
    for (i, f) in fields.iter().enumerate().skip(1) {
        prop_assert!(f.span.start >= whole.start && f.span.end <= whole.end);
        let is_leaf = fields.get(i + 1).is_none_or(|next| next.depth <= f.depth);
        if is_leaf {
            prop_assert_eq!(f.span.start, at, "{:?}", f);
            at = f.span.end;
        }
    }
    prop_assert_eq!(at, whole.end);
    Ok(())
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Encode -> decode gives back the same packet, through the view and through
    /// `PacketRepr::parse`, and the violations are those the fields imply.
    #[test]
    fn encode_then_decode_round_trips(repr in packet(false, 8)) {
        let bytes = repr.to_bytes();
        prop_assert_eq!(bytes.len(), repr.wire_len());
        prop_assert_eq!(PacketRepr::parse(&bytes), Ok(repr.clone()));

        let packet = Packet::new_checked(&bytes).unwrap();
        prop_assert_eq!(packet.header(), repr.header);
        let mut offset = 12;
        let mut count = 0;
        for (view, original) in packet.messages().zip(&repr.messages) {
            let view = view.unwrap();
            prop_assert_eq!(view.offset, offset);
            prop_assert_eq!(view.bytes.len(), original.wire_len());
            prop_assert_eq!(view.msg_type(), original.msg_type());
            prop_assert_eq!(view.seqno(), original.seqno());
            prop_assert_eq!(&MessageRepr::from(&view.message), original);
            prop_assert_eq!(
                view.violations().collect::<Vec<_>>(),
                expected_violations(original, offset)
            );
            prop_assert!(view.may_violate() || expected_violations(original, offset).is_empty());
            offset += view.bytes.len();
            count += 1;
        }
        prop_assert_eq!(count, repr.messages.len());
        prop_assert_eq!(offset, bytes.len());
    }

    /// The heads (`Packet::heads`: the messages found, their bodies not
    /// read) are the messages: the same places, bytes, type, seqno, entry
    /// count, player, token and text, the same message and Input read on, the same error where the bytes stop
    /// decoding, on any bytes a decoder may meet, and every valid packet
    /// cut at any length.
    #[test]
    fn heads_read_as_the_messages_do(bytes in payload(), valid in packet(true, 6)) {
        let valid = valid.to_bytes();
        let cuts = (12..=valid.len()).map(|n| &valid[..n]);
        for bytes in std::iter::once(&bytes[..]).chain(cuts) {
            let Ok(packet) = Packet::new_checked(bytes) else { continue };
            let heads: Vec<_> = packet.heads().collect();
            let views: Vec<_> = packet.messages().collect();
            prop_assert_eq!(heads.len(), views.len());
            for (head, view) in heads.iter().zip(&views) {
                match (head, view) {
                    (Ok(h), Ok(v)) => {
                        prop_assert_eq!(h.offset, v.offset);
                        prop_assert_eq!(h.bytes, v.bytes);
                        prop_assert_eq!(h.msg_type, v.msg_type());
                        prop_assert_eq!(h.seqno(), v.seqno());
                        prop_assert_eq!(h.entry_count(), v.message.entry_count());
                        prop_assert_eq!(h.player(), v.message.player());
                        prop_assert_eq!(h.token(), v.message.token());
                        prop_assert_eq!(h.text().to_string(), v.text().to_string());
                        // Read on (the analysis reads only what a rule judges).
                        prop_assert_eq!(&h.view(), v);
                        let input = match v.message {
                            Message::Input(i) => Some(i),
                            _ => None,
                        };
                        prop_assert_eq!(h.input(), input);
                    }
                    (Err(a), Err(b)) => prop_assert_eq!(a, b),
                    _ => prop_assert!(false, "{:?} / {:?}", head, view),
                }
            }
        }
    }

    /// One message alone, encoded by `emit`, has the length `wire_len` says.
    #[test]
    fn emit_writes_wire_len_bytes(m in message(false)) {
        let mut out = Vec::new();
        m.emit(&mut out);
        prop_assert_eq!(out.len(), m.wire_len());
        prop_assert_eq!(out[0], m.msg_type().id());
    }

    /// No input makes the decoder panic, every error sits inside the payload where
    /// the next message would start, and what decodes is coherent.
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in payload()) {
        check_decode(&bytes)?;
    }

    /// A valid packet cut at any length gives a `Truncated` error at the offset of
    /// the message that was cut (or `ShortHeader` inside the header), and the
    /// messages before it are exactly the original ones.
    #[test]
    fn cutting_a_packet_anywhere_truncates_the_right_message(repr in packet(true, 6)) {
        let bytes = repr.to_bytes();
        // Where each message starts and ends.
        let mut spans = Vec::new();
        let mut at = 12;
        for m in &repr.messages {
            spans.push(at..at + m.wire_len());
            at += m.wire_len();
        }
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            if cut < 12 {
                prop_assert_eq!(Packet::new_checked(part), Err(DecodeError::ShortHeader { len: cut }));
                continue;
            }
            let packet = Packet::new_checked(part).unwrap();
            prop_assert_eq!(packet.header(), repr.header);
            let mut messages = packet.messages();
            let mut decoded = 0;
            let mut error = None;
            for item in messages.by_ref() {
                match item {
                    Ok(view) => {
                        prop_assert!(decoded < repr.messages.len());
                        prop_assert_eq!(view.offset, spans[decoded].start);
                        prop_assert_eq!(&MessageRepr::from(&view.message), &repr.messages[decoded]);
                        decoded += 1;
                    }
                    Err(e) => error = Some(e),
                }
            }
            // The messages wholly before the cut decode; the one the cut falls in fails.
            let whole = spans.iter().take_while(|s| s.end <= cut).count();
            prop_assert_eq!(decoded, whole);
            match spans.get(whole).filter(|s| s.start < cut) {
                None => prop_assert_eq!(error, None, "cut on a message boundary"),
                Some(cut_message) => {
                    let original = &repr.messages[whole];
                    let available = cut - cut_message.start;
                    let fixed = fixed_part(original.msg_type());
                    let needed = if available < fixed { fixed } else { original.wire_len() };
                    let expected = DecodeError::Truncated {
                        offset: cut_message.start,
                        msg_type: original.msg_type(),
                        needed,
                        available,
                    };
                    prop_assert_eq!(error, Some(expected));
                    prop_assert_eq!(messages.undecoded(), Some((cut_message.start, &part[cut_message.start..])));
                    prop_assert_eq!(PacketRepr::parse(part), Err(expected));
                }
            }
        }
    }

    /// The builder keeps to 512 bytes, puts the reliable queue in first and in
    /// order (stopping at the first that does not fit), then every unreliable
    /// message that still fits, in queue order.
    #[test]
    fn builder_fills_reliable_first_within_the_limit(
        h in header(),
        reliable_queue in vec(reliable(), 0..8),
        unreliable_queue in vec(unreliable(true), 0..8),
    ) {
        let mut b = PacketBuilder::new();
        b.start(h);
        let filled = b.fill(&reliable_queue, &unreliable_queue);
        let bytes = b.bytes();
        prop_assert!(bytes.len() <= MAX_PACKET_SIZE);

        // The specification's rule, step by step.
        let mut room = MAX_PACKET_SIZE - 12;
        let mut expected = Vec::new();
        let mut reliable_taken = 0;
        for m in &reliable_queue {
            if m.wire_len() > room {
                break;
            }
            room -= m.wire_len();
            expected.push(m.clone());
            reliable_taken += 1;
        }
        let mut unreliable_taken = 0;
        for m in &unreliable_queue {
            if m.wire_len() <= room {
                room -= m.wire_len();
                expected.push(m.clone());
                unreliable_taken += 1;
            }
        }
        prop_assert_eq!(filled.reliable, reliable_taken);
        prop_assert_eq!(filled.unreliable, unreliable_taken);
        prop_assert_eq!(
            PacketRepr::parse(bytes),
            Ok(PacketRepr { header: h, messages: expected })
        );
        prop_assert_eq!(b.remaining(), room);
    }
}
