//! Battlegrounds wire format: golden vectors written by hand from
//! `battlegrounds-NOTES.md` (little-endian, 8-byte header), one per (channel, op),
//! decoded to their fields and encoded back to the same bytes; then property
//! tests: round trips, arbitrary bytes never panic, every cut is a truncation at
//! the right offset.

use lwarscope::proto::battlegrounds::dissect::{Text, Token};
use lwarscope::proto::battlegrounds::wire::{ByteOrder, Dialect, walk_in};
use lwarscope::proto::battlegrounds::wire::{
    DecodeError, ErrorKind, Header, MoveEvent, MoveOp, Movement, MsgAck, Packet, PacketRepr,
    PacketType, Part, Payload, PayloadRepr, Tag, VectorD, VectorF, Violation, is_auth, plausible,
    walk,
};
use lwarscope::proto::field::{Field, FieldSink};
use proptest::prelude::*;

#[path = "../common/text_bytes.rs"]
mod text_bytes;
use text_bytes::same_bytes_as_display;

/// Hex with spaces and `|` separators between fields, for reading.
fn bytes(hex: &str) -> Vec<u8> {
    let clean: String = hex.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(clean).unwrap()
}

/// Session 0x01020304, little-endian.
const SID: u32 = 0x0102_0304;

fn check(hex: &str, expected: PacketRepr) -> Vec<u8> {
    let wire = bytes(hex);
    let parsed = PacketRepr::parse(&wire).unwrap();
    assert_eq!(parsed, expected);
    assert_eq!(expected.to_bytes().unwrap(), wire, "re-encoding differs");
    assert_eq!(expected.wire_len(), wire.len());
    same_texts(&wire);
    wire
}

/// Every golden vector's token and text: their bytes are their `Display`.
fn same_texts(wire: &[u8]) {
    let view = Packet::new_checked(wire).unwrap();
    same_bytes_as_display(&Token(&view));
    same_bytes_as_display(&Text(&view));
}

fn movement_a() -> Movement {
    Movement {
        timestamp: 1000,
        position: VectorD { x: 1.5, y: -2.0 },
        forward: VectorF { x: 1.0, y: 0.0 },
        movement_bits: 0x05,
    }
}

fn movement_b() -> Movement {
    Movement {
        timestamp: 2000,
        position: VectorD { x: 0.0, y: 0.5 },
        forward: VectorF { x: 0.0, y: -1.0 },
        movement_bits: 0x01,
    }
}

#[test]
fn auth() {
    let w = check(
        "04030201 | 00 | 00 | 00 | 00",
        PacketRepr::new(SID, 0, PayloadRepr::Auth),
    );
    assert!(is_auth(&w));
    let p = Packet::new_checked(&w).unwrap();
    assert_eq!(p.session_id(), SID);
    assert_eq!(p.payload(), Payload::Auth);
}

#[test]
fn auth_ok() {
    let w = check(
        "04030201 00 01 00 00 \
         | e803000000000000 \
         | 000000000000f83f 00000000000000c0 \
         | 0000803f 00000000 \
         | 05 | 03 | 626f62",
        PacketRepr::new(
            SID,
            0,
            PayloadRepr::AuthOk {
                movement: movement_a(),
                name: b"bob".to_vec(),
            },
        ),
    );
    assert!(!is_auth(&w));
    assert!(plausible(&w));
    let Payload::AuthOk { movement, name } = Packet::new_checked(&w).unwrap().payload() else {
        panic!("not AUTH_OK")
    };
    assert_eq!(name, b"bob");
    assert_eq!(movement.position.y, -2.0);
}

#[test]
fn ping_and_pong() {
    check(
        "04030201 00 02 00 00",
        PacketRepr::new(SID, 0, PayloadRepr::Ping),
    );
    check(
        "04030201 00 03 00 00 | e803000000000000",
        PacketRepr::new(SID, 0, PayloadRepr::Pong { timestamp: 1000 }),
    );
    // A negative timestamp is an i64.
    check(
        "04030201 00 03 00 00 | ffffffffffffffff",
        PacketRepr::new(SID, 0, PayloadRepr::Pong { timestamp: -1 }),
    );
}

#[test]
fn move_op_and_move_event() {
    check(
        "04030201 01 00 00 00 \
         | d007000000000000 | 0000000000000000 000000000000e03f | 00000000 000080bf \
         | 01 | 07",
        PacketRepr::new(
            SID,
            1,
            PayloadRepr::MoveOp(MoveOp {
                movement: movement_b(),
                op_sig: 7,
            }),
        ),
    );
    check(
        "04030201 01 01 00 00 \
         | d007000000000000 | 0000000000000000 000000000000e03f | 00000000 000080bf \
         | 01 | 07 | ff",
        PacketRepr::new(
            SID,
            1,
            PayloadRepr::MoveEvent(MoveEvent {
                movement: movement_b(),
                op_sig: 7,
                event_sig: 255,
            }),
        ),
    );
}

#[test]
fn prop_circle() {
    let w = check(
        "04030201 02 00 00 00 \
         | 2a00000000000000 | 000000000000f83f 00000000000000c0 \
         | 00 | 0000803f 00000000 | 00000040 \
         | 0200 | abcd",
        PacketRepr::new(
            SID,
            2,
            PayloadRepr::PropCircle {
                prop_id: 42,
                position: VectorD { x: 1.5, y: -2.0 },
                shape_type: Tag,
                center: VectorF { x: 1.0, y: 0.0 },
                radius: 2.0,
                render_data: vec![0xab, 0xcd],
            },
        ),
    );
    let Payload::PropCircle { render_data, .. } = Packet::new_checked(&w).unwrap().payload() else {
        panic!("not a PROP circle")
    };
    assert_eq!(render_data, [0xab, 0xcd]);
}

#[test]
fn prop_polygon() {
    let w = check(
        "04030201 02 00 00 00 \
         | ffffffffffffffff | 0000000000000000 0000000000000000 \
         | 01 | 0200 | 0000803f 00000000 | 00000000 000080bf \
         | 0000",
        PacketRepr::new(
            SID,
            2,
            PayloadRepr::PropPolygon {
                prop_id: -1,
                position: VectorD::default(),
                shape_type: Tag,
                vertices: vec![VectorF { x: 1.0, y: 0.0 }, VectorF { x: 0.0, y: -1.0 }],
                render_data: vec![],
            },
        ),
    );
    let Payload::PropPolygon { vertices: v, .. } = Packet::new_checked(&w).unwrap().payload()
    else {
        panic!("not a PROP polygon")
    };
    assert_eq!(v.len(), 2);
    assert_eq!(v.get(1), Some(VectorF { x: 0.0, y: -1.0 }));
    assert_eq!(v.get(2), None);
}

#[test]
fn msg_and_msg_ack_on_every_channel() {
    for channel in 0u8..3 {
        let hex = format!(
            "04030201 {channel:02x} 10 00 00 | 01000000 | 08000000 | 0000 | deadbeef00010203"
        );
        check(
            &hex,
            PacketRepr::new(
                SID,
                channel,
                PayloadRepr::Msg {
                    msg_id: 1,
                    msg_len: 8,
                    block_id: 0,
                    block: bytes("deadbeef00010203"),
                },
            ),
        );
        let hex = format!("04030201 {channel:02x} 11 00 00 | feffffff | 0100");
        check(
            &hex,
            PacketRepr::new(
                SID,
                channel,
                PayloadRepr::MsgAck(MsgAck {
                    msg_id: 0xffff_fffe,
                    block_id: 1,
                }),
            ),
        );
    }
}

#[test]
fn malformed_vectors() {
    let cases: &[(&str, DecodeError)] = &[
        ("04030201 00 00 00", DecodeError::ShortHeader { len: 7 }),
        (
            "04030201 00 00 01 00",
            DecodeError::UnknownVersion { version: 1 },
        ),
        (
            "04030201 03 10 00 00 01000000",
            DecodeError::UnknownType {
                channel: 3,
                op: 0x10,
            },
        ),
        (
            // (0, 0x04) is CLOSE since the revised notes; 0x05 is undefined.
            "04030201 00 05 00 00",
            DecodeError::UnknownType { channel: 0, op: 5 },
        ),
        (
            "04030201 00 00 00 00 | 00",
            DecodeError::TrailingBytes {
                offset: 8,
                packet_type: PacketType::Auth,
                count: 1,
            },
        ),
        (
            "04030201 00 03 00 00 | e8030000",
            DecodeError::Truncated {
                offset: 8,
                packet_type: PacketType::Pong,
                part: Part::Fixed,
                needed: 8,
                available: 4,
            },
        ),
        (
            // AUTH_OK whose name_len says 3 and 1 byte follows.
            "04030201 00 01 00 00 | e803000000000000 \
             | 000000000000f83f 00000000000000c0 | 0000803f 00000000 | 05 | 03 | 62",
            DecodeError::Truncated {
                offset: 42,
                packet_type: PacketType::AuthOk,
                part: Part::Name,
                needed: 3,
                available: 1,
            },
        ),
        (
            // PROP, shape 2.
            "04030201 02 00 00 00 | 2a00000000000000 | 00000000000000000000000000000000 | 02",
            DecodeError::UnknownShape {
                offset: 32,
                shape_type: 2,
            },
        ),
        (
            // PROP circle with render_data_len -2.
            "04030201 02 00 00 00 | 2a00000000000000 | 00000000000000000000000000000000 \
             | 00 | 000000000000000000000000 | feff",
            DecodeError::NegativeLength {
                offset: 45,
                packet_type: PacketType::Prop,
                part: Part::RenderData,
                len: -2,
            },
        ),
        (
            "04030201 02 11 00 00 | 01000000 | 0000 | 00",
            DecodeError::TrailingBytes {
                offset: 14,
                packet_type: PacketType::MsgAck,
                count: 1,
            },
        ),
    ];
    for (hex, expected) in cases {
        let e = Packet::new_checked(&bytes(hex)).unwrap_err();
        assert_eq!(e, *expected, "{hex}");
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn violations_of_packets_that_decode() {
    let w = bytes("04030201 00 02 00 07");
    assert!(plausible(&w));
    assert!(!is_auth(&bytes("04030201 00 00 00 07")));
    let p = Packet::new_checked(&w).unwrap();
    assert_eq!(
        p.violations().collect::<Vec<_>>(),
        [Violation::ReservedNonZero { reserved: 7 }]
    );
    // MSG whose block is longer than its message, and a message shorter than a header.
    let w = bytes("04030201 02 10 00 00 | 01000000 | 02000000 | 0000 | 010203");
    let v: Vec<_> = Packet::new_checked(&w).unwrap().violations().collect();
    assert_eq!(
        v,
        [
            Violation::MsgLenShort { msg_len: 2 },
            Violation::BlockOverrun {
                block_len: 3,
                msg_len: 2
            }
        ]
    );
    // An AUTH_OK name that is not UTF-8.
    let w = bytes(
        "04030201 00 01 00 00 | e803000000000000 \
         | 000000000000f83f 00000000000000c0 | 0000803f 00000000 | 05 | 01 | ff",
    );
    assert_eq!(
        Packet::new_checked(&w)
            .unwrap()
            .violations()
            .collect::<Vec<_>>(),
        [Violation::InvalidUtf8 { offset: 42 }]
    );
}

#[test]
fn header_reads_whatever_the_version() {
    let h = Header::parse(&bytes("04030201 02 10 05 09")).unwrap();
    assert_eq!(
        h,
        Header {
            session_id: SID,
            channel: 2,
            op: 0x10,
            version: 5,
            reserved: 9
        }
    );
    assert_eq!(
        h.packet_type(),
        Err(DecodeError::UnknownVersion { version: 5 })
    );
}

// Property tests.

fn finite_f32() -> impl Strategy<Value = f32> {
    -1.0e6f32..1.0e6f32
}

fn finite_f64() -> impl Strategy<Value = f64> {
    -1.0e12f64..1.0e12f64
}

fn vector_f() -> impl Strategy<Value = VectorF> {
    (finite_f32(), finite_f32()).prop_map(|(x, y)| VectorF { x, y })
}

fn movement() -> impl Strategy<Value = Movement> {
    (
        any::<i64>(),
        finite_f64(),
        finite_f64(),
        vector_f(),
        any::<u8>(),
    )
        .prop_map(|(timestamp, x, y, forward, movement_bits)| Movement {
            timestamp,
            position: VectorD { x, y },
            forward,
            movement_bits,
        })
}

fn payload() -> impl Strategy<Value = PayloadRepr> {
    prop_oneof![
        Just(PayloadRepr::Auth),
        (movement(), proptest::collection::vec(any::<u8>(), 0..=255))
            .prop_map(|(movement, name)| PayloadRepr::AuthOk { movement, name }),
        Just(PayloadRepr::Ping),
        any::<i64>().prop_map(|timestamp| PayloadRepr::Pong { timestamp }),
        (movement(), any::<u8>())
            .prop_map(|(movement, op_sig)| PayloadRepr::MoveOp(MoveOp { movement, op_sig })),
        (movement(), any::<u8>(), any::<u8>()).prop_map(|(movement, op_sig, event_sig)| {
            PayloadRepr::MoveEvent(MoveEvent {
                movement,
                op_sig,
                event_sig,
            })
        }),
        (
            any::<i64>(),
            finite_f64(),
            finite_f64(),
            (vector_f(), finite_f32()),
            proptest::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(prop_id, x, y, (center, radius), render_data)| {
                PayloadRepr::PropCircle {
                    prop_id,
                    position: VectorD { x, y },
                    shape_type: Tag,
                    center,
                    radius,
                    render_data,
                }
            }),
        (
            any::<i64>(),
            finite_f64(),
            finite_f64(),
            proptest::collection::vec(vector_f(), 0..12),
            proptest::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(
                |(prop_id, x, y, vertices, render_data)| PayloadRepr::PropPolygon {
                    prop_id,
                    position: VectorD { x, y },
                    shape_type: Tag,
                    vertices,
                    render_data,
                }
            ),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
            proptest::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(msg_id, msg_len, block_id, block)| PayloadRepr::Msg {
                msg_id,
                msg_len,
                block_id,
                block,
            }),
        (any::<u32>(), any::<u16>())
            .prop_map(|(msg_id, block_id)| PayloadRepr::MsgAck(MsgAck { msg_id, block_id })),
    ]
}

/// Every payload, the reference implementation's forms included.
fn any_form_payload() -> impl Strategy<Value = PayloadRepr> {
    prop_oneof![
        payload(),
        Just(PayloadRepr::Close),
        any::<u8>().prop_map(|seq| PayloadRepr::PingSeq { seq }),
        (any::<u8>(), any::<i64>())
            .prop_map(|(seq, timestamp)| PayloadRepr::PongSeq { seq, timestamp }),
        any::<i64>().prop_map(|timestamp| PayloadRepr::AuthOkTimestamp { timestamp }),
    ]
}

fn packet() -> impl Strategy<Value = PacketRepr> {
    (any::<u32>(), 0u8..3, payload())
        .prop_map(|(sid, channel, payload)| PacketRepr::new(sid, channel, payload))
}

struct Count(usize);
impl FieldSink for Count {
    fn field(&mut self, f: Field<'_>) {
        // Every span lies inside the packet: the caller checks against the length.
        self.0 = self.0.max(f.offset + f.len);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip(p in packet()) {
        let wire = p.to_bytes().unwrap();
        prop_assert_eq!(wire.len(), p.wire_len());
        let view = Packet::new_checked(&wire).unwrap();
        prop_assert_eq!(view.packet_type(), p.payload.packet_type());
        prop_assert_eq!(PacketRepr::parse(&wire).unwrap(), p);
        let mut spans = Count(0);
        walk(&wire, &mut spans).unwrap();
        prop_assert_eq!(spans.0, wire.len());
    }

    /// Both byte orders, every form (the reference's told apart by size).
    #[test]
    fn round_trip_in_both_orders(
        (sid, channel, payload) in (any::<u32>(), 0u8..3, any_form_payload()),
        big in any::<bool>(),
    ) {
        let p = PacketRepr::new(sid, channel, payload);
        let (order, dialect) = if big {
            (ByteOrder::Big, Dialect::BIG)
        } else {
            (ByteOrder::Little, Dialect::LITTLE)
        };
        let wire = p.to_bytes_in(order).unwrap();
        prop_assert_eq!(wire.len(), p.wire_len());
        prop_assert_eq!(PacketRepr::parse_in(&wire, dialect).unwrap(), p);
        let mut spans = Count(0);
        walk_in(&wire, dialect, &mut spans).unwrap();
        prop_assert_eq!(spans.0, wire.len());
        let view = Packet::new_checked_in(&wire, dialect).unwrap();
        same_bytes_as_display(&Token(&view));
        same_bytes_as_display(&Text(&view));
    }

    #[test]
    fn arbitrary_bytes_never_panic(wire in proptest::collection::vec(any::<u8>(), 0..96)) {
        let _ = plausible(&wire);
        let _ = is_auth(&wire);
        let mut spans = Count(0);
        let walked = walk(&wire, &mut spans);
        prop_assert!(spans.0 <= wire.len());
        match Packet::new_checked(&wire) {
            Ok(p) => {
                prop_assert!(walked.is_ok());
                let _ = p.violations().count();
                // What decodes encodes back to the very same bytes.
                let repr = PacketRepr::parse(&wire).unwrap();
                prop_assert_eq!(repr.to_bytes().unwrap(), wire);
            }
            Err(e) => {
                prop_assert_eq!(walked.unwrap_err(), e);
                prop_assert!(e.offset() <= wire.len());
            }
        }
    }

    #[test]
    fn arbitrary_payloads_after_a_valid_header(
        channel in 0u8..3,
        op in prop_oneof![0u8..4, 0x10u8..0x12],
        body in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut wire = vec![1, 2, 3, 4, channel, op, 0, 0];
        wire.extend_from_slice(&body);
        if let Ok(p) = Packet::new_checked(&wire) {
            prop_assert_eq!(PacketRepr::parse(&wire).unwrap().to_bytes().unwrap(), wire.clone());
            prop_assert_eq!(p.len(), wire.len());
        }
    }

    #[test]
    fn every_cut_is_a_truncation_at_the_right_offset(p in packet()) {
        let wire = p.to_bytes().unwrap();
        let is_msg = p.payload.packet_type() == PacketType::Msg;
        let is_auth_ok = p.payload.packet_type() == PacketType::AuthOk;
        for cut in 0..wire.len() {
            let kept = &wire[..cut];
            match Packet::new_checked(kept) {
                // A MSG block is the rest of the packet: a cut after the fixed
                // part leaves a shorter block, which decodes.
                // An AUTH_OK cut to an 8-byte payload reads as the reference's
                // AUTH_OK of a timestamp only (the forms are told apart by size).
                Ok(view) if is_auth_ok && cut == 16 => {
                    prop_assert_eq!(view.packet_type(), PacketType::AuthOk);
                }
                Ok(view) => {
                    prop_assert!(is_msg && cut >= 18, "cut {} of {:?} decoded", cut, p);
                    let Payload::Msg { block, .. } = view.payload() else { unreachable!() };
                    prop_assert_eq!(block.len(), cut - 18);
                }
                Err(e) => {
                    prop_assert!(e.kind() == ErrorKind::ShortHeader || e.kind() == ErrorKind::Truncated, "{}", e);
                    if cut < 8 {
                        prop_assert_eq!(e, DecodeError::ShortHeader { len: cut });
                    }
                    let needed = e.needed().unwrap();
                    let available = e.available().unwrap();
                    // The error is where the cut falls: the part starting at
                    // `offset` needed more than the `cut - offset` bytes left.
                    prop_assert!(e.offset() <= cut);
                    prop_assert_eq!(available, cut - e.offset());
                    prop_assert!(e.offset() + needed > cut);
                    prop_assert!(e.offset() + needed <= wire.len());
                }
            }
        }
    }
}
