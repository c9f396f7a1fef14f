//! Starstrike golden vectors, written by hand from `starstrike-NOTES.md` (big-endian,
//! exact payload sizes, NUL-padded strings): bytes -> fields -> the same bytes, for
//! every packet type. Then property tests: round trips, arbitrary bytes never
//! panic, and every cut of a valid packet is a truncation at the right offset.

use lwarscope::proto::dissect::Dissector;
use lwarscope::proto::field::{Field, FieldSink, Value};
use lwarscope::proto::starstrike::dissect::Starstrike;
use lwarscope::proto::starstrike::wire::{
    ChatMessage, ConnectionAccept, ConnectionRequest, DecodeError, EntityDestroy, EntitySpawn,
    EntityState, EnumKind, FixedStr, Heartbeat, MatchState, Message, MessageRepr, Packet,
    PacketRepr, PacketType, PlayerDied, PlayerInput, PlayerScored, Quaternion, Reason, Vector3,
    Violation, WorldSnapshot, is_starstrike, layout, walk_fields,
};
use proptest::prelude::*;

#[path = "../common/text_bytes.rs"]
mod text_bytes;
use text_bytes::same_bytes_as_display;

/// Bytes from hex, spaces ignored.
fn h(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(s).unwrap()
}

/// `text` NUL-padded to `n` bytes.
fn padded(text: &[u8], n: usize) -> Vec<u8> {
    let mut v = text.to_vec();
    v.resize(n, 0);
    v
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// The packet's token and text, each as [`same_bytes_as_display`] checks.
fn texts_as_display(bytes: &[u8]) {
    let mut n = 0;
    Starstrike
        .messages(bytes, &mut |m| {
            same_bytes_as_display(m.token);
            same_bytes_as_display(m.text);
            n += 1;
        })
        .unwrap();
    assert_eq!(n, 1);
}

/// Checks bytes -> repr -> bytes, the view against the repr, and no
/// violation; the text's bytes against its `Display`.
fn golden(bytes: &[u8], expected: &PacketRepr) {
    assert!(is_starstrike(bytes));
    let parsed = PacketRepr::parse(bytes).expect("golden vector decodes");
    assert_eq!(&parsed, expected);
    assert_eq!(
        expected.to_bytes().unwrap(),
        bytes,
        "emit gives the same bytes"
    );
    assert_eq!(expected.buffer_len(), bytes.len());
    let p = Packet::new_checked(bytes).unwrap();
    assert_eq!(p.seq(), expected.seq);
    assert_eq!(p.ack_bits(), expected.ack_bits);
    assert_eq!(p.packet_type(), expected.packet_type());
    assert_eq!(p.message().to_owned_repr(), expected.message);
    assert_eq!(p.violations(), vec![]);
    assert_eq!(p.oversize(), None);
    texts_as_display(bytes);
}

#[test]
fn connection_request() {
    let bytes = cat(&[
        &h("53545253 0001 0001 00000000"),
        &h("01"),
        &padded(b"alice", 32),
        &h("0102030405060708"),
    ]);
    assert_eq!(bytes.len(), 12 + 41);
    golden(
        &bytes,
        &PacketRepr::new(
            1,
            0,
            Message::ConnectionRequest(ConnectionRequest {
                protocol_version: 1,
                player_name: FixedStr::new(b"alice"),
                client_id: 0x0102_0304_0506_0708,
            }),
        ),
    );
}

#[test]
fn connection_accept() {
    let bytes = h("53545253 0002 0010 00000001  0000002a 00000064 0000003c");
    golden(
        &bytes,
        &PacketRepr::new(
            0x10,
            1,
            Message::ConnectionAccept(ConnectionAccept {
                assigned_player_id: 42,
                server_tick: 100,
                tick_rate: 60,
            }),
        ),
    );
}

#[test]
fn connection_reject_and_disconnect() {
    let reject = cat(&[
        &h("53545253 0003 0011 00000003 02"),
        &padded(b"version", 128),
    ]);
    assert_eq!(reject.len(), 12 + 129);
    golden(
        &reject,
        &PacketRepr::new(
            0x11,
            3,
            Message::ConnectionReject(Reason {
                reason: 2,
                message: FixedStr::new(b"version"),
            }),
        ),
    );
    let disconnect = cat(&[&h("53545253 0004 ffff 80000000 01"), &padded(b"bye", 128)]);
    golden(
        &disconnect,
        &PacketRepr::new(
            0xffff,
            0x8000_0000,
            Message::Disconnect(Reason {
                reason: 1,
                message: FixedStr::new(b"bye"),
            }),
        ),
    );
}

#[test]
fn heartbeat() {
    golden(
        &h("53545253 0005 0000 ffffffff 000004d2"),
        &PacketRepr::new(
            0,
            u32::MAX,
            Message::Heartbeat(Heartbeat { timestamp: 1234 }),
        ),
    );
}

#[test]
fn player_input() {
    // moveX 0.5, moveY -1.0, lookX 0.25, lookY 2.0, Fire|Jump.
    let bytes =
        h("53545253 0100 0102 00000000 00000007 3f000000 bf800000 3e800000 40000000 00000005");
    golden(
        &bytes,
        &PacketRepr::new(
            0x0102,
            0,
            Message::PlayerInput(PlayerInput {
                tick: 7,
                move_x: 0.5,
                move_y: -1.0,
                look_x: 0.25,
                look_y: 2.0,
                button_state: 5,
            }),
        ),
    );
}

fn entity_bytes() -> Vec<u8> {
    // id 9, Player, position (1, 2, -0.5), rotation (0, 0, 0, 1), velocity
    // (0.5, 0, 0), health 100, IsAlive|HasShield.
    h(
        "00000009 01 3f800000 40000000 bf000000 00000000 00000000 00000000 3f800000
       3f000000 00000000 00000000 64 09",
    )
}

fn entity() -> EntityState {
    EntityState {
        entity_id: 9,
        entity_type: 1,
        position: Vector3 {
            x: 1.0,
            y: 2.0,
            z: -0.5,
        },
        rotation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
        velocity: Vector3 {
            x: 0.5,
            y: 0.0,
            z: 0.0,
        },
        health: 100,
        flags: 9,
    }
}

#[test]
fn world_snapshot() {
    let e = entity_bytes();
    assert_eq!(e.len(), 47);
    let bytes = cat(&[&h("53545253 0101 0200 0000000f 00000100 02"), &e, &e]);
    assert_eq!(bytes.len(), 12 + 5 + 2 * 47);
    golden(
        &bytes,
        &PacketRepr::new(
            0x0200,
            0xf,
            Message::WorldSnapshot(WorldSnapshot {
                tick: 256,
                entities: vec![entity(), entity()],
            }),
        ),
    );
    let empty = h("53545253 0101 0201 00000000 00000101 00");
    golden(
        &empty,
        &PacketRepr::new(
            0x0201,
            0,
            Message::WorldSnapshot(WorldSnapshot {
                tick: 257,
                entities: vec![],
            }),
        ),
    );
}

#[test]
fn entity_spawn_and_destroy() {
    let spawn = h(
        "53545253 0102 0003 00000000 0000000a 02 3fc00000 00000000 00000000
                   00000000 00000000 00000000 3f800000 03",
    );
    assert_eq!(spawn.len(), 12 + 34);
    golden(
        &spawn,
        &PacketRepr::new(
            3,
            0,
            Message::EntitySpawn(EntitySpawn {
                entity_id: 10,
                entity_type: 2,
                position: Vector3 {
                    x: 1.5,
                    y: 0.0,
                    z: 0.0,
                },
                rotation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    w: 1.0,
                },
                owner_id: 3,
            }),
        ),
    );
    golden(
        &h("53545253 0103 0004 00000001 0000000a 04"),
        &PacketRepr::new(
            4,
            1,
            Message::EntityDestroy(EntityDestroy {
                entity_id: 10,
                reason: 4,
            }),
        ),
    );
}

#[test]
fn game_events() {
    golden(
        &h("53545253 0200 0005 00000000 00000003 00000064 01"),
        &PacketRepr::new(
            5,
            0,
            Message::PlayerScored(PlayerScored {
                player_id: 3,
                points: 100,
                score_type: 1,
            }),
        ),
    );
    golden(
        &h("53545253 0201 0006 00000000 00000003 00000000 04"),
        &PacketRepr::new(
            6,
            0,
            Message::PlayerDied(PlayerDied {
                victim_id: 3,
                killer_id: 0,
                death_type: 4,
            }),
        ),
    );
    golden(
        &h("53545253 0202 0007 00000000 03 0000ea60 01020304"),
        &PacketRepr::new(
            7,
            0,
            Message::MatchState(MatchState {
                state: 3,
                time_remaining: 60_000,
                team_scores: [1, 2, 3, 4],
            }),
        ),
    );
}

#[test]
fn chat_message() {
    let bytes = cat(&[
        &h("53545253 0300 0008 00000000 00000003 02"),
        &padded(b"gg", 256),
    ]);
    assert_eq!(bytes.len(), 12 + 261);
    golden(
        &bytes,
        &PacketRepr::new(
            8,
            0,
            Message::ChatMessage(ChatMessage {
                sender_id: 3,
                channel: 2,
                message: FixedStr::new(b"gg"),
            }),
        ),
    );
}

/// A text from the wire with what JSON must escape (a quote, a backslash,
/// a control character, a byte that is not UTF-8): the JSON text's search
/// begins at or before it, and its bytes are its `Display`'s.
#[test]
fn a_text_that_needs_escapes_is_searched_from_its_quote() {
    let bytes = cat(&[
        &h("53545253 0300 0008 00000000 00000003 02"),
        &padded(b"say \"hi\" \\ \x01 \xff", 256),
    ]);
    texts_as_display(&bytes);
    let mut text = String::new();
    Starstrike
        .messages(&bytes, &mut |m| text = m.text.to_string())
        .unwrap();
    assert_eq!(
        text,
        "ChatMessage senderId=3 channel=Team (2) message=\"say \\\"hi\\\" \\\\ \\u{1} \\xff\""
    );
}

#[test]
fn a_full_length_string_has_no_nul() {
    let name = [b'x'; 32];
    let bytes = cat(&[&h("53545253 0001 0001 00000000 01"), &name, &[0; 8]]);
    let p = Packet::new_checked(&bytes).unwrap();
    let Message::ConnectionRequest(r) = p.message() else {
        panic!("not a request")
    };
    assert_eq!(r.player_name.text(), &name[..]);
    assert_eq!(p.violations(), vec![]);
}

/// Field names and values as the walk gives them.
#[derive(Default)]
struct Walk(Vec<(String, Option<u32>, usize, usize, String)>);

impl FieldSink for Walk {
    fn field(&mut self, f: Field<'_>) {
        self.0.push((
            f.def.name.to_owned(),
            f.index,
            f.offset,
            f.len,
            f.value.to_string(),
        ));
    }
}

#[test]
fn the_field_walk_names_every_byte_of_a_snapshot() {
    let bytes = cat(&[
        &h("53545253 0101 0200 0000000f 00000100 01"),
        &entity_bytes(),
    ]);
    let mut walk = Walk::default();
    walk_fields(&bytes, &mut walk).unwrap();
    let find = |name: &str| walk.0.iter().find(|f| f.0 == name).cloned().unwrap();
    assert_eq!(find("strs.seq").4, "512");
    assert_eq!(find("strs.type").4, "WorldSnapshot (257)");
    assert_eq!(find("strs.ack_bits").4, format!("{:032b}", 0xf));
    assert_eq!(
        find("strs.entity"),
        ("strs.entity".into(), Some(0), 17, 47, String::new())
    );
    assert_eq!(find("strs.entity.type").4, "Player (1)");
    assert_eq!(find("strs.entity.pos_z").4, "-0.5");
    assert_eq!(find("strs.entity.health").2, 17 + 45);
    // Leaves cover every byte exactly once.
    let mut covered = vec![0u8; bytes.len()];
    for (name, _, offset, len, _) in &walk.0 {
        if ["strs.header", "strs.snapshot", "strs.entity"].contains(&name.as_str()) {
            continue;
        }
        for c in &mut covered[*offset..offset + len] {
            *c += 1;
        }
    }
    assert!(covered.iter().all(|&c| c == 1), "{covered:?}");
}

#[test]
fn violations_of_packets_that_still_decode() {
    // EntityDestroy with reason 9.
    let p = h("53545253 0103 0004 00000001 0000000a 09");
    let v = Packet::new_checked(&p).unwrap().violations();
    assert_eq!(v.len(), 1);
    assert!(matches!(
        v[0],
        Violation::InvalidEnum {
            offset: 16,
            value: 9,
            ..
        }
    ));
    assert_eq!(
        v[0].to_string(),
        "EntityDestroy reason at offset 16 is 9, not a listed value"
    );

    // PlayerInput: moveX NaN, moveY 1.5, lookY +inf.
    let p = h("53545253 0100 0102 00000000 00000007 7fc00000 3fc00000 00000000 7f800000 00000000");
    let v = Packet::new_checked(&p).unwrap().violations();
    assert_eq!(v.len(), 3, "{v:?}");
    assert!(matches!(
        v[0],
        Violation::NonFinite {
            offset: 16,
            bits: 0x7fc0_0000,
            ..
        }
    ));
    assert!(matches!(
        v[1],
        Violation::InputRange {
            offset: 20,
            value: 1.5,
            ..
        }
    ));
    assert!(matches!(v[2], Violation::NonFinite { offset: 28, .. }));
    // lookX is not range-checked: 2.0 is fine there (golden above).

    // A chat message "a", NUL, "b".
    let mut text = padded(b"a", 256);
    text[2] = b'b';
    let p = cat(&[&h("53545253 0300 0008 00000000 00000003 09"), &text]);
    let v = Packet::new_checked(&p).unwrap().violations();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(matches!(
        v[0],
        Violation::InvalidEnum {
            offset: 16,
            value: 9,
            ..
        }
    ));
    assert!(matches!(
        v[1],
        Violation::StringPadding {
            offset: 17,
            at: 19,
            ..
        }
    ));

    // A snapshot's entity with an unknown type and an infinite velocity.
    let mut e = entity_bytes();
    e[4] = 0;
    e[33..37].copy_from_slice(&h("ff800000"));
    let p = cat(&[&h("53545253 0101 0200 00000000 00000001 01"), &e]);
    let v = Packet::new_checked(&p).unwrap().violations();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(matches!(
        v[0],
        Violation::InvalidEnum {
            offset: 21,
            value: 0,
            ..
        }
    ));
    assert!(matches!(v[1], Violation::NonFinite { offset: 50, .. }));
}

#[test]
fn an_oversize_snapshot_is_flagged_and_decoded() {
    let e = entity_bytes();
    let mut bytes = h("53545253 0101 0001 00000000 00000001 1a"); // 26 entities
    for _ in 0..26 {
        bytes.extend_from_slice(&e);
    }
    assert_eq!(bytes.len(), 12 + 5 + 26 * 47);
    let p = Packet::new_checked(&bytes).unwrap();
    assert_eq!(p.oversize(), Some(Violation::Oversize { len: 1239 }));
    assert_eq!(p.entity_count(), 26);
    // 25 fit.
    let mut fits = h("53545253 0101 0001 00000000 00000001 19");
    for _ in 0..25 {
        fits.extend_from_slice(&e);
    }
    assert!(fits.len() <= 1200);
    assert_eq!(Packet::new_checked(&fits).unwrap().oversize(), None);
}

#[test]
fn malformed_packets_name_the_type_and_offset() {
    let e = Packet::new_checked(&h("53545253 0103 0004 00000001 0000000a")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "EntityDestroy reason at offset 16 is truncated: it needs 1 bytes, 0 are left"
    );
    let e = Packet::new_checked(&h("53545253 0103 0004 00000001 0000000a 0100")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "EntityDestroy has 1 trailing bytes at offset 17: its payload is 5 bytes"
    );
    let e = Packet::new_checked(&h("53545253 0400 0004 00000001")).unwrap_err();
    assert_eq!(e, DecodeError::UnknownType { type_id: 0x0400 });
    assert_eq!(e.to_string(), "unknown packetType 0x0400 at offset 4");
    let e = Packet::new_checked(&h("4c574152 0005 0004 00000001 00000000")).unwrap_err();
    assert_eq!(e, DecodeError::WrongMagic { found: 0x4c57_4152 });
}

// Property tests.

fn f32_any() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

fn vector() -> impl Strategy<Value = Vector3> {
    (f32_any(), f32_any(), f32_any()).prop_map(|(x, y, z)| Vector3 { x, y, z })
}

fn quaternion() -> impl Strategy<Value = Quaternion> {
    (f32_any(), f32_any(), f32_any(), f32_any()).prop_map(|(x, y, z, w)| Quaternion { x, y, z, w })
}

fn fixed<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
    prop_oneof![
        proptest::collection::vec(1u8..=255, 0..=N).prop_map(|t| FixedStr::<N>::new(&t)),
        proptest::collection::vec(any::<u8>(), N).prop_map(|b| {
            let mut a = [0u8; N];
            a.copy_from_slice(&b);
            FixedStr(a)
        }),
    ]
}

fn entity_state() -> impl Strategy<Value = EntityState> {
    (
        any::<u32>(),
        any::<u8>(),
        vector(),
        quaternion(),
        vector(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(
            |(entity_id, entity_type, position, rotation, velocity, health, flags)| EntityState {
                entity_id,
                entity_type,
                position,
                rotation,
                velocity,
                health,
                flags,
            },
        )
}

fn message() -> impl Strategy<Value = MessageRepr> {
    prop_oneof![
        (any::<u8>(), fixed::<32>(), any::<u64>()).prop_map(|(v, n, c)| {
            Message::ConnectionRequest(ConnectionRequest {
                protocol_version: v,
                player_name: n,
                client_id: c,
            })
        }),
        (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(a, b, c)| {
            Message::ConnectionAccept(ConnectionAccept {
                assigned_player_id: a,
                server_tick: b,
                tick_rate: c,
            })
        }),
        (any::<u8>(), fixed::<128>())
            .prop_map(|(reason, message)| Message::ConnectionReject(Reason { reason, message })),
        (any::<u8>(), fixed::<128>())
            .prop_map(|(reason, message)| Message::Disconnect(Reason { reason, message })),
        any::<u32>().prop_map(|timestamp| Message::Heartbeat(Heartbeat { timestamp })),
        (
            any::<u32>(),
            f32_any(),
            f32_any(),
            f32_any(),
            f32_any(),
            any::<u32>()
        )
            .prop_map(|(tick, move_x, move_y, look_x, look_y, button_state)| {
                Message::PlayerInput(PlayerInput {
                    tick,
                    move_x,
                    move_y,
                    look_x,
                    look_y,
                    button_state,
                })
            }),
        (
            any::<u32>(),
            proptest::collection::vec(entity_state(), 0..30)
        )
            .prop_map(|(tick, entities)| Message::WorldSnapshot(WorldSnapshot { tick, entities })),
        (
            any::<u32>(),
            any::<u8>(),
            vector(),
            quaternion(),
            any::<u8>()
        )
            .prop_map(|(entity_id, entity_type, position, rotation, owner_id)| {
                Message::EntitySpawn(EntitySpawn {
                    entity_id,
                    entity_type,
                    position,
                    rotation,
                    owner_id,
                })
            }),
        (any::<u32>(), any::<u8>()).prop_map(|(entity_id, reason)| {
            Message::EntityDestroy(EntityDestroy { entity_id, reason })
        }),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(player_id, points, score_type)| {
            Message::PlayerScored(PlayerScored {
                player_id,
                points,
                score_type,
            })
        }),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(victim_id, killer_id, death_type)| {
            Message::PlayerDied(PlayerDied {
                victim_id,
                killer_id,
                death_type,
            })
        }),
        (any::<u8>(), any::<u32>(), any::<[u8; 4]>()).prop_map(
            |(state, time_remaining, team_scores)| Message::MatchState(MatchState {
                state,
                time_remaining,
                team_scores,
            })
        ),
        (any::<u32>(), any::<u8>(), fixed::<256>()).prop_map(|(sender_id, channel, message)| {
            Message::ChatMessage(ChatMessage {
                sender_id,
                channel,
                message,
            })
        }),
    ]
}

fn packet() -> impl Strategy<Value = PacketRepr> {
    (any::<u16>(), any::<u32>(), message()).prop_map(|(s, a, m)| PacketRepr::new(s, a, m))
}

/// The length of the field that holds a payload's byte, in the layout.
fn slot_len(t: PacketType, offset_in_payload: usize) -> usize {
    let (start, item) = layout::item_at_offset(t, offset_in_payload).unwrap();
    let len = item.prim.size();
    assert_eq!(
        layout::field_at(t, offset_in_payload),
        Some((start, item.def))
    );
    assert!(start <= offset_in_payload && offset_in_payload < start + len);
    len
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn bytes_round_trip_through_the_repr_and_the_view(repr in packet()) {
        let bytes = repr.to_bytes().unwrap();
        prop_assert_eq!(bytes.len(), repr.buffer_len());
        let parsed = PacketRepr::parse(&bytes).unwrap();
        prop_assert_eq!(parsed.to_bytes().unwrap(), bytes.clone());
        let view = Packet::new_checked(&bytes).unwrap();
        prop_assert_eq!(view.packet_type(), repr.packet_type());
        prop_assert_eq!(view.seq(), repr.seq);
        let mut again = vec![0u8; bytes.len()];
        let n = lwarscope::proto::starstrike::wire::emit_packet(
            view.seq(), view.ack_bits(), &view.message(), &mut again).unwrap();
        prop_assert_eq!(&again[..n], &bytes[..]);
        prop_assert_eq!(view.oversize().is_some(), bytes.len() > 1200);
        let _ = view.violations();
        texts_as_display(&bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1400)) {
        check_anything(&bytes);
    }

    #[test]
    fn arbitrary_payloads_behind_a_valid_header_never_panic(
        t in proptest::sample::select(PacketType::ALL.to_vec()),
        seq in any::<u16>(),
        payload in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut bytes = h("53545253");
        bytes.extend_from_slice(&t.id().to_be_bytes());
        bytes.extend_from_slice(&seq.to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        bytes.extend_from_slice(&payload);
        check_anything(&bytes);
    }

    #[test]
    fn every_cut_is_a_truncation_at_the_field_of_the_first_missing_byte(repr in packet()) {
        let bytes = repr.to_bytes().unwrap();
        let t = repr.packet_type();
        for cut in 0..bytes.len() {
            let e = Packet::new_checked(&bytes[..cut]).unwrap_err();
            prop_assert!(e.is_short(), "{}", e);
            if cut < 12 {
                prop_assert_eq!(e, DecodeError::ShortHeader { len: cut });
                continue;
            }
            let DecodeError::Truncated { packet_type, offset, needed, available, .. } = e else {
                return Err(TestCaseError::fail(format!("cut {cut}: {e}")));
            };
            prop_assert_eq!(packet_type, t);
            prop_assert_eq!(available, cut - 12);
            let full = bytes.len() - 12;
            // A snapshot cut before its count only knows it needs the fixed part.
            prop_assert!(needed == full || (t == PacketType::WorldSnapshot && cut <= 16 && needed == 5));
            let len = slot_len(t, cut - 12);
            prop_assert!(offset <= cut && cut < offset + len, "cut {} offset {} len {}", cut, offset, len);
            prop_assert_eq!(PacketRepr::parse(&bytes[..cut]), Err(e));
        }
    }
}

fn check_anything(bytes: &[u8]) {
    let parsed = PacketRepr::parse(bytes);
    let mut walk = Walk::default();
    let walked = walk_fields(bytes, &mut walk);
    for (_, _, offset, len, _) in &walk.0 {
        assert!(offset + len <= bytes.len());
    }
    match Packet::new_checked(bytes) {
        Ok(p) => {
            assert!(walked.is_ok());
            let repr = parsed.unwrap();
            assert_eq!(repr.to_bytes().unwrap(), bytes);
            for v in p.violations() {
                let _ = v.to_string();
                assert!(v.offset() < bytes.len());
            }
            if let Message::WorldSnapshot(s) = p.message() {
                assert_eq!(s.entities.len(), p.entity_count());
            }
            texts_as_display(bytes);
        }
        Err(e) => {
            assert_eq!(parsed, Err(e));
            assert_eq!(walked, Err(e));
            assert!(e.offset() <= bytes.len());
            let _ = e.to_string();
        }
    }
}

#[test]
fn enum_values_show_their_names_in_fields() {
    let v = Value::Enum {
        raw: 2,
        name: EnumKind::ChatChannel.value_name(2),
    };
    assert_eq!(v.to_string(), "Team (2)");
}

/// The notes: "`PlayerInput.moveX/moveY` outside [-1, 1] ... are violations" (the
/// draft's `ValidateInput`: `abs(input.moveX) > 1.0f`). The ends are inside:
/// 1.0 is 0x3f800000, -1.0 is 0xbf800000 (IEEE-754 binary32, big-endian per the
/// notes' Encoding). The next float above 1.0 (0x3f800001) and below -1.0
/// (0xbf800001) are outside. lookX/lookY have no range.
#[test]
fn move_axes_include_their_ends() {
    // Header: "STRS", PlayerInput 0x0100, seq 1, ackBits 0; payload: tick 7,
    // moveX, moveY, lookX 0, lookY 0, buttons 0x1f (all five listed buttons).
    let input = |mx: &str, my: &str| {
        h(&format!(
            "53545253 0100 0001 00000000 00000007 {mx} {my} 00000000 00000000 0000001f"
        ))
    };
    for (mx, my) in [
        ("3f800000", "bf800000"),
        ("bf800000", "3f800000"),
        ("80000000", "00000000"),
    ] {
        let b = input(mx, my);
        assert_eq!(b.len(), 12 + 24);
        assert_eq!(Packet::new_checked(&b).unwrap().violations(), vec![]);
    }
    let b = input("3f800001", "bf800001");
    let v = Packet::new_checked(&b).unwrap().violations();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(matches!(v[0], Violation::InputRange { offset: 16, .. }));
    assert!(matches!(v[1], Violation::InputRange { offset: 20, .. }));
}

/// The notes: "At most 25 entities fit in 1188 bytes": a WorldSnapshot of 25
/// entities is 12 + 5 + 25 * 47 = 1192 bytes (within the 1200-byte MTU, header
/// included); the count byte is a u8, so 255 entities (12 + 5 + 11985 = 12002
/// bytes) still decode, oversize.
#[test]
fn snapshot_entity_count_boundaries() {
    let e = entity_bytes();
    let mut b = h("53545253 0101 0001 00000000 00000001 ff");
    for _ in 0..255 {
        b.extend_from_slice(&e);
    }
    assert_eq!(b.len(), 12002);
    let p = Packet::new_checked(&b).unwrap();
    assert_eq!(p.entity_count(), 255);
    assert_eq!(p.oversize(), Some(Violation::Oversize { len: 12002 }));
    // Zero entities: just tick and count.
    let p = h("53545253 0101 0001 00000000 00000001 00");
    assert_eq!(Packet::new_checked(&p).unwrap().entity_count(), 0);
    // A count of 1 with no entity bytes: truncated at the first entity's id.
    let p = h("53545253 0101 0001 00000000 00000001 01");
    assert!(matches!(
        Packet::new_checked(&p),
        Err(DecodeError::Truncated {
            offset: 17,
            needed: 52,
            available: 5,
            ..
        })
    ));
}
