//! Golden vectors, written by hand from the specification
//! (`lwar-network-protocol.txt` revision 14 and `NOTES.md`), not produced by our
//! encoder: every byte below is commented with the field it encodes.
//!
//! Each vector is checked both ways: bytes -> exact fields (through the zero-copy
//! view and through `PacketRepr::parse`) and fields -> the same bytes
//! (`PacketRepr::to_bytes`). Then the error and violation cases, with their
//! offsets, and the boundaries that are *not* violations.

use lwarscope::proto::lwar::wire::{
    Collision, DecodeError, ErrorKind, Header, Id, Input, Message, MessageRepr, MessageType,
    MessageView, Packet, PacketRepr, StatsEntry, Str, UpdateCircleEntry, UpdateEntry,
    UpdatePosEntry, UpdateRayEntry, Violation, ViolationKind,
};

#[path = "../common/text_bytes.rs"]
mod text_bytes;
use text_bytes::same_bytes_as_display;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Decodes `bytes`, which must hold no error, and checks the header, that the
/// messages sit back to back at `offsets`, and that each view's bytes are its
/// slice of the packet. Returns the views for per-field assertions.
fn views<'a>(bytes: &'a [u8], header: Header, offsets: &[usize]) -> Vec<MessageView<'a>> {
    let packet = Packet::new_checked(bytes).expect("a valid header");
    assert_eq!(packet.header(), header, "header");
    assert_eq!(packet.ack(), header.ack);
    assert_eq!(packet.timestamp(), header.timestamp);
    assert_eq!(packet.len(), bytes.len());
    let mut messages = packet.messages();
    let views: Vec<MessageView<'a>> = messages
        .by_ref()
        .map(|m| m.expect("no decode error"))
        .collect();
    assert_eq!(messages.undecoded(), None, "nothing left undecoded");
    let got: Vec<usize> = views.iter().map(|v| v.offset).collect();
    assert_eq!(got, offsets, "message offsets");
    let mut end = 12;
    for v in &views {
        assert_eq!(v.offset, end, "back to back");
        assert_eq!(v.bytes, &bytes[v.offset..v.offset + v.bytes.len()]);
        end += v.bytes.len();
    }
    assert_eq!(end, bytes.len(), "every byte belongs to a message");
    for v in &views {
        same_bytes_as_display(&v.message.token());
        same_bytes_as_display(&v.text());
    }
    views
}

/// Bytes -> fields through `PacketRepr::parse`, and fields -> the same bytes.
fn both_ways(bytes: &[u8], header: Header, messages: Vec<MessageRepr>) {
    let repr = PacketRepr { header, messages };
    assert_eq!(
        PacketRepr::parse(bytes),
        Ok(repr.clone()),
        "bytes -> fields"
    );
    assert_eq!(repr.wire_len(), bytes.len(), "wire_len");
    assert_eq!(repr.to_bytes(), bytes, "fields -> bytes");
    for m in &repr.messages {
        let mut one = Vec::new();
        m.emit(&mut one);
        assert_eq!(one.len(), m.wire_len(), "{m:?}");
    }
}

fn no_violations(views: &[MessageView<'_>]) {
    for v in views {
        assert_eq!(
            v.violations().collect::<Vec<_>>(),
            vec![],
            "{:?}",
            v.message
        );
    }
}

const fn header(ack: u32, timestamp: u32) -> Header {
    Header { ack, timestamp }
}

// ---------------------------------------------------------------------------
// One vector per message type
// ---------------------------------------------------------------------------

/// Connect, seqno 1, name "alice" (frame 1 of the real capture has exactly these bytes).
const CONNECT: [u8; 23] = [
    0xf2, 0x70, 0x87, 0xc5, // appId 0xf27087c5
    0x00, 0x00, 0x00, 0x00, // ack 0: nothing processed yet
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x01, // type 1 = Connect
    0x00, 0x00, 0x00, 0x01, // seqno 1
    0x05, // len 5
    b'a', b'l', b'i', b'c', b'e', // name "alice"
];

#[test]
fn connect() {
    let v = views(&CONNECT, header(0, 0), &[12]);
    assert_eq!(
        v[0].message,
        Message::Connect {
            seqno: 1,
            name: Str::new(b"alice")
        }
    );
    assert_eq!(v[0].msg_type(), MessageType::Connect);
    assert_eq!(v[0].seqno(), Some(1));
    assert_eq!(
        v[0].message.string().and_then(|s| s.to_str()),
        Some("alice")
    );
    assert_eq!(v[0].message.token().to_string(), "Connect#1");
    no_violations(&v);
    both_ways(
        &CONNECT,
        header(0, 0),
        vec![MessageRepr::Connect {
            seqno: 1,
            name: b"alice".to_vec(),
        }],
    );
}

/// Disconnect, seqno 7; the header numbers check big-endian byte order.
const DISCONNECT: [u8; 17] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x01, 0x02, // ack 0x0102 = 258 (big-endian)
    0x01, 0x02, 0x03, 0x04, // timestamp 0x01020304 = 16909060
    0x02, // type 2 = Disconnect
    0x00, 0x00, 0x00, 0x07, // seqno 7 (and no payload)
];

#[test]
fn disconnect_and_a_big_endian_header() {
    let v = views(&DISCONNECT, header(258, 0x0102_0304), &[12]);
    assert_eq!(v[0].message, Message::Disconnect { seqno: 7 });
    assert_eq!(v[0].bytes.len(), 5, "a reliable header and nothing else");
    no_violations(&v);
    both_ways(
        &DISCONNECT,
        header(258, 16_909_060),
        vec![MessageRepr::Disconnect { seqno: 7 }],
    );
}

/// Join of player 2:256 (generation 2, index 256) named "bob".
const JOIN: [u8; 25] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x01, // ack 1
    0x00, 0x00, 0x06, 0x7a, // timestamp 1658
    0x03, // type 3 = Join
    0x00, 0x00, 0x00, 0x01, // seqno 1
    0x00, 0x02, // playerId generation 2 (first)
    0x01, 0x00, // playerId index 256 (second)
    0x03, // len 3
    b'b', b'o', b'b', // name "bob"
];

#[test]
fn join_id_is_generation_then_index() {
    let v = views(&JOIN, header(1, 1658), &[12]);
    let player = Id {
        generation: 2,
        index: 256,
    };
    assert_eq!(
        v[0].message,
        Message::Join {
            seqno: 1,
            player,
            name: Str::new(b"bob")
        }
    );
    assert_eq!(v[0].message.player(), Some(player));
    assert_eq!(player.to_u32(), 0x0002_0100);
    assert_eq!(player.to_string(), "2:256");
    no_violations(&v);
    both_ways(
        &JOIN,
        header(1, 1658),
        vec![MessageRepr::Join {
            seqno: 1,
            player: Id::new(2, 256),
            name: b"bob".to_vec(),
        }],
    );
}

/// Leave of player 1:3, seqno 256.
const LEAVE: [u8; 21] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x02, // ack 2
    0x00, 0x00, 0x10, 0x00, // timestamp 4096
    0x04, // type 4 = Leave
    0x00, 0x00, 0x01, 0x00, // seqno 256
    0x00, 0x01, // playerId generation 1
    0x00, 0x03, // playerId index 3
];

#[test]
fn leave() {
    let v = views(&LEAVE, header(2, 4096), &[12]);
    assert_eq!(
        v[0].message,
        Message::Leave {
            seqno: 256,
            player: Id::new(1, 3)
        }
    );
    no_violations(&v);
    both_ways(
        &LEAVE,
        header(2, 4096),
        vec![MessageRepr::Leave {
            seqno: 256,
            player: Id::new(1, 3),
        }],
    );
}

/// Chat from player 0:1, "né!" in UTF-8 (a two-byte character).
const CHAT: [u8; 26] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x05, // type 5 = Chat
    0x00, 0x00, 0x00, 0x0a, // seqno 10
    0x00, 0x00, // playerId generation 0
    0x00, 0x01, // playerId index 1
    0x04, // len 4 (bytes, not characters)
    b'n', 0xc3, 0xa9, b'!', // msg "né!"
];

#[test]
fn chat_length_counts_bytes() {
    let v = views(&CHAT, header(0, 0), &[12]);
    let Message::Chat {
        seqno,
        player,
        text,
    } = v[0].message
    else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!((seqno, player), (10, Id::new(0, 1)));
    assert_eq!(text.len(), 4);
    assert_eq!(text.to_str(), Some("né!"));
    no_violations(&v);
    both_ways(
        &CHAT,
        header(0, 0),
        vec![MessageRepr::Chat {
            seqno: 10,
            player: Id::new(0, 1),
            text: "né!".as_bytes().to_vec(),
        }],
    );
}

/// Chat whose text is not UTF-8: it decodes, keeps its raw bytes, and is a violation.
const CHAT_INVALID_UTF8: [u8; 26] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x05, // type 5 = Chat
    0x00, 0x00, 0x00, 0x0b, // seqno 11
    0x00, 0x00, // playerId generation 0
    0x00, 0x02, // playerId index 2
    0x04, // len 4
    b'h', b'i', 0xff, b'!', // msg: 0xff is never UTF-8
];

#[test]
fn chat_with_invalid_utf8_keeps_its_bytes() {
    let v = views(&CHAT_INVALID_UTF8, header(0, 0), &[12]);
    let text = v[0].message.string().unwrap();
    assert_eq!(text.as_bytes(), b"hi\xff!");
    assert_eq!(text.to_str(), None);
    assert!(!text.is_utf8());
    assert_eq!(text.to_string(), r#""hi\xff!""#);
    assert_eq!(
        v[0].violations().collect::<Vec<_>>(),
        vec![Violation::InvalidUtf8 {
            offset: 12,
            msg_type: MessageType::Chat
        }]
    );
    both_ways(
        &CHAT_INVALID_UTF8,
        header(0, 0),
        vec![MessageRepr::Chat {
            seqno: 11,
            player: Id::new(0, 2),
            text: b"hi\xff!".to_vec(),
        }],
    );
}

/// Add of entity 3:4 owned by player 1:2, template 5.
const ADD: [u8; 26] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x01, // ack 1
    0x00, 0x00, 0x00, 0x20, // timestamp 32
    0x06, // type 6 = Add
    0x00, 0x00, 0x00, 0x02, // seqno 2
    0x00, 0x03, // entityId generation 3
    0x00, 0x04, // entityId index 4
    0x00, 0x01, // playerId generation 1
    0x00, 0x02, // playerId index 2
    0x05, // typeId 5
];

#[test]
fn add() {
    let v = views(&ADD, header(1, 32), &[12]);
    assert_eq!(
        v[0].message,
        Message::Add {
            seqno: 2,
            entity: Id::new(3, 4),
            player: Id::new(1, 2),
            type_id: 5
        }
    );
    no_violations(&v);
    both_ways(
        &ADD,
        header(1, 32),
        vec![MessageRepr::Add {
            seqno: 2,
            entity: Id::new(3, 4),
            player: Id::new(1, 2),
            type_id: 5,
        }],
    );
}

/// Remove of entity 0x1234:0x5678, with the largest seqno.
const REMOVE: [u8; 21] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0xff, 0xff, 0xff, 0xfe, // ack 4294967294
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x07, // type 7 = Remove
    0xff, 0xff, 0xff, 0xff, // seqno 4294967295
    0x12, 0x34, // entityId generation 0x1234
    0x56, 0x78, // entityId index 0x5678
];

#[test]
fn remove() {
    let v = views(&REMOVE, header(u32::MAX - 1, 0), &[12]);
    assert_eq!(
        v[0].message,
        Message::Remove {
            seqno: u32::MAX,
            entity: Id::new(0x1234, 0x5678)
        }
    );
    no_violations(&v);
    both_ways(
        &REMOVE,
        header(0xffff_fffe, 0),
        vec![MessageRepr::Remove {
            seqno: 0xffff_ffff,
            entity: Id::new(4660, 22136),
        }],
    );
}

/// Selection by player 0:2 of ship 1 and weapons 2, 3, 4, 5.
const SELECTION: [u8; 26] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x03, // ack 3
    0x00, 0x00, 0x00, 0x40, // timestamp 64
    0x08, // type 8 = Selection
    0x00, 0x00, 0x00, 0x03, // seqno 3
    0x00, 0x00, // playerId generation 0
    0x00, 0x02, // playerId index 2
    0x01, // shipType 1
    0x02, 0x03, 0x04, 0x05, // weaponType[0..4]
];

#[test]
fn selection() {
    let v = views(&SELECTION, header(3, 64), &[12]);
    assert_eq!(
        v[0].message,
        Message::Selection {
            seqno: 3,
            player: Id::new(0, 2),
            ship_type: 1,
            weapon_types: [2, 3, 4, 5]
        }
    );
    no_violations(&v);
    both_ways(
        &SELECTION,
        header(3, 64),
        vec![MessageRepr::Selection {
            seqno: 3,
            player: Id::new(0, 2),
            ship_type: 1,
            weapon_types: [2, 3, 4, 5],
        }],
    );
}

/// Name change of player 1:1 to "é".
const NAME: [u8; 24] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x09, // type 9 = Name
    0x00, 0x00, 0x00, 0x04, // seqno 4
    0x00, 0x01, // playerId generation 1
    0x00, 0x01, // playerId index 1
    0x02, // len 2
    0xc3, 0xa9, // name "é"
];

#[test]
fn name() {
    let v = views(&NAME, header(0, 0), &[12]);
    assert_eq!(
        v[0].message,
        Message::Name {
            seqno: 4,
            player: Id::new(1, 1),
            name: Str::new("é".as_bytes())
        }
    );
    no_violations(&v);
    both_ways(
        &NAME,
        header(0, 0),
        vec![MessageRepr::Name {
            seqno: 4,
            player: Id::new(1, 1),
            name: vec![0xc3, 0xa9],
        }],
    );
}

/// Synced, seqno 5.
const SYNCED: [u8; 17] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x01, // ack 1
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x0a, // type 10 = Synced
    0x00, 0x00, 0x00, 0x05, // seqno 5
];

#[test]
fn synced() {
    let v = views(&SYNCED, header(1, 0), &[12]);
    assert_eq!(v[0].message, Message::Synced { seqno: 5 });
    assert_eq!(v[0].message.token().to_string(), "Synced#5");
    no_violations(&v);
    both_ways(
        &SYNCED,
        header(1, 0),
        vec![MessageRepr::Synced { seqno: 5 }],
    );
}

/// Stats with two entries.
const STATS: [u8; 34] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x03, 0xe8, // timestamp 1000
    0x65, // type 101 = Stats (unreliable: no seqno)
    0x02, // num 2
    // [0]
    0x00, 0x01, 0x00, 0x00, // player 1:0 (the server's own player has index 0)
    0x00, 0x03, // kills 3
    0x00, 0x00, // deaths 0
    0x00, 0x2a, // ping 42
    // [1]
    0x00, 0x02, 0x00, 0x01, // player 2:1
    0x01, 0x00, // kills 256
    0x00, 0x05, // deaths 5
    0xff, 0xff, // ping 65535
];

#[test]
fn stats_with_two_entries() {
    let v = views(&STATS, header(0, 1000), &[12]);
    let entries = [
        StatsEntry {
            player: Id::new(1, 0),
            kills: 3,
            deaths: 0,
            ping: 42,
        },
        StatsEntry {
            player: Id::new(2, 1),
            kills: 256,
            deaths: 5,
            ping: 65535,
        },
    ];
    let Message::Stats(e) = v[0].message else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!(e.len(), 2);
    assert_eq!(e.iter().collect::<Vec<_>>(), entries);
    assert_eq!(e.get(1), Some(entries[1]));
    assert_eq!(e.get(2), None);
    assert_eq!(e.as_bytes(), &STATS[14..]);
    assert_eq!(v[0].seqno(), None);
    assert_eq!(v[0].message.token().to_string(), "Stats(2)");
    no_violations(&v);
    both_ways(
        &STATS,
        header(0, 1000),
        vec![MessageRepr::Stats(entries.to_vec())],
    );
}

/// Input of player 0:1 at frame 256, with negative aim.
const INPUT: [u8; 35] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x05, // ack 5
    0x00, 0x00, 0x00, 0x21, // timestamp 33
    0x67, // type 103 = Input
    0x00, 0x00, 0x00, 0x01, // playerId 0:1
    0x00, 0x00, 0x01, 0x00, // frameNo 256
    0x01, // forward: pressed now only
    0x00, // backward
    0x02, // turnLeft: pressed the frame before
    0x80, // turnRight: pressed seven frames ago
    0xff, // strafeLeft: held for eight frames
    0x7f, // strafeRight
    0x01, 0x03, 0x07, 0x0f, // shooting[0..4]
    0xff, 0x38, // aim x -200 (int16)
    0x80, 0x00, // aim y -32768 (int16 minimum)
];

#[test]
fn input_has_signed_aim() {
    let v = views(&INPUT, header(5, 33), &[12]);
    let input = Input {
        player: Id::new(0, 1),
        frame: 256,
        forward: 0x01,
        backward: 0x00,
        turn_left: 0x02,
        turn_right: 0x80,
        strafe_left: 0xff,
        strafe_right: 0x7f,
        shooting: [1, 3, 7, 15],
        aim_x: -200,
        aim_y: i16::MIN,
    };
    assert_eq!(v[0].message, Message::Input(input));
    assert_eq!(v[0].message.player(), Some(Id::new(0, 1)));
    assert_eq!(v[0].bytes.len(), 23, "1 + 22 bytes, no orientation");
    no_violations(&v);
    both_ways(&INPUT, header(5, 33), vec![MessageRepr::Input(input)]);
}

/// Full: one byte, and the original server sends timestamp 0 with it.
const FULL: [u8; 13] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0: the Connect is not acknowledged
    0x00, 0x00, 0x00, 0x00, // timestamp 0
    0x68, // type 104 = Full, no payload
];

#[test]
fn full() {
    let v = views(&FULL, header(0, 0), &[12]);
    assert_eq!(v[0].message, Message::Full);
    assert_eq!(v[0].bytes, &[0x68]);
    no_violations(&v);
    both_ways(&FULL, header(0, 0), vec![MessageRepr::Full]);
}

/// Collision of entities 1:2 and 3:4 at (-1, 32767).
const COLLISION: [u8; 25] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x07, // timestamp 7
    0x69, // type 105 = Collision
    0x00, 0x01, 0x00, 0x02, // entityIds[0] 1:2
    0x00, 0x03, 0x00, 0x04, // entityIds[1] 3:4
    0xff, 0xff, // x -1
    0x7f, 0xff, // y 32767
];

#[test]
fn collision() {
    let v = views(&COLLISION, header(0, 7), &[12]);
    let c = Collision {
        entities: [Id::new(1, 2), Id::new(3, 4)],
        x: -1,
        y: i16::MAX,
    };
    assert_eq!(v[0].message, Message::Collision(c));
    no_violations(&v);
    both_ways(&COLLISION, header(0, 7), vec![MessageRepr::Collision(c)]);
}

/// Update of two entities, one at a negative position.
const UPDATE: [u8; 36] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x01, // ack 1
    0x00, 0x00, 0x06, 0x98, // timestamp 1688
    0x6e, // type 110 = Update
    0x02, // num 2
    // [0]
    0x00, 0x00, 0x00, 0x01, // entityId 0:1
    0x01, 0xf4, // x 500
    0x01, 0xf4, // y 500
    0x00, 0x00, // orientation 0
    0x64, // health 100
    // [1]
    0x00, 0x01, 0x00, 0x02, // entityId 1:2
    0xfe, 0x18, // x -488
    0xff, 0x9c, // y -100
    0x01, 0x67, // orientation 359
    0x00, // health 0
];

#[test]
fn update_with_negative_positions() {
    let v = views(&UPDATE, header(1, 1688), &[12]);
    let entries = [
        UpdateEntry {
            entity: Id::new(0, 1),
            x: 500,
            y: 500,
            orientation: 0,
            health: 100,
        },
        UpdateEntry {
            entity: Id::new(1, 2),
            x: -488,
            y: -100,
            orientation: 359,
            health: 0,
        },
    ];
    let Message::Update(e) = v[0].message else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!(e.iter().collect::<Vec<_>>(), entries);
    assert_eq!(v[0].message.entry_count(), Some(2));
    assert_eq!(v[0].message.token().to_string(), "Update(2)");
    no_violations(&v);
    both_ways(
        &UPDATE,
        header(1, 1688),
        vec![MessageRepr::Update(entries.to_vec())],
    );
}

/// UpdatePos of three entities.
const UPDATE_POS: [u8; 38] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x01, // timestamp 1
    0x6f, // type 111 = UpdatePos
    0x03, // num 3
    0x00, 0x00, 0x00, 0x05, 0x00, 0x0a, 0x00, 0x14, // [0] entityId 0:5, x 10, y 20
    0x00, 0x01, 0x00, 0x06, 0xff, 0xf6, 0xff, 0xec, // [1] entityId 1:6, x -10, y -20
    0xff, 0xff, 0xff, 0xff, 0x80, 0x00, 0x7f, 0xff, // [2] 65535:65535, x -32768, y 32767
];

#[test]
fn update_pos_with_three_entries() {
    let v = views(&UPDATE_POS, header(0, 1), &[12]);
    let entries = [
        UpdatePosEntry {
            entity: Id::new(0, 5),
            x: 10,
            y: 20,
        },
        UpdatePosEntry {
            entity: Id::new(1, 6),
            x: -10,
            y: -20,
        },
        UpdatePosEntry {
            entity: Id::new(u16::MAX, u16::MAX),
            x: i16::MIN,
            y: i16::MAX,
        },
    ];
    let Message::UpdatePos(e) = v[0].message else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!(e.iter().collect::<Vec<_>>(), entries);
    no_violations(&v);
    both_ways(
        &UPDATE_POS,
        header(0, 1),
        vec![MessageRepr::UpdatePos(entries.to_vec())],
    );
}

/// UpdateRay of one ray.
const UPDATE_RAY: [u8; 26] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x02, // timestamp 2
    0x70, // type 112 = UpdateRay
    0x01, // num 1
    0x00, 0x02, 0x00, 0x05, // entityId 2:5
    0x80, 0x00, // x -32768
    0x00, 0x0a, // y 10
    0x00, 0x5a, // orientation 90
    0x03, 0xe8, // length 1000
];

#[test]
fn update_ray() {
    let v = views(&UPDATE_RAY, header(0, 2), &[12]);
    let entry = UpdateRayEntry {
        entity: Id::new(2, 5),
        x: -32768,
        y: 10,
        orientation: 90,
        length: 1000,
    };
    let Message::UpdateRay(e) = v[0].message else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!(e.iter().collect::<Vec<_>>(), [entry]);
    no_violations(&v);
    both_ways(
        &UPDATE_RAY,
        header(0, 2),
        vec![MessageRepr::UpdateRay(vec![entry])],
    );
}

/// UpdateCircle of one circle.
const UPDATE_CIRCLE: [u8; 24] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack 0
    0x00, 0x00, 0x00, 0x03, // timestamp 3
    0x71, // type 113 = UpdateCircle
    0x01, // num 1
    0x00, 0x00, 0x00, 0x09, // entityId 0:9
    0xff, 0xf6, // x -10
    0x00, 0x14, // y 20
    0x00, 0x32, // radius 50
];

#[test]
fn update_circle() {
    let v = views(&UPDATE_CIRCLE, header(0, 3), &[12]);
    let entry = UpdateCircleEntry {
        entity: Id::new(0, 9),
        x: -10,
        y: 20,
        radius: 50,
    };
    let Message::UpdateCircle(e) = v[0].message else {
        panic!("{:?}", v[0].message)
    };
    assert_eq!(e.iter().collect::<Vec<_>>(), [entry]);
    no_violations(&v);
    both_ways(
        &UPDATE_CIRCLE,
        header(0, 3),
        vec![MessageRepr::UpdateCircle(vec![entry])],
    );
}

#[test]
fn every_message_type_has_a_vector() {
    let all: [&[u8]; 18] = [
        &CONNECT,
        &DISCONNECT,
        &JOIN,
        &LEAVE,
        &CHAT,
        &ADD,
        &REMOVE,
        &SELECTION,
        &NAME,
        &SYNCED,
        &STATS,
        &INPUT,
        &FULL,
        &COLLISION,
        &UPDATE,
        &UPDATE_POS,
        &UPDATE_RAY,
        &UPDATE_CIRCLE,
    ];
    for (bytes, t) in all.iter().zip(MessageType::ALL) {
        let packet = Packet::new_checked(bytes).unwrap();
        let types: Vec<_> = packet.messages().map(|m| m.unwrap().msg_type()).collect();
        assert_eq!(types, [t]);
        assert_eq!(bytes[12], t.id(), "{t}");
        assert_eq!(t.is_reliable(), t.id() < 100, "{t}");
    }
}

// ---------------------------------------------------------------------------
// Several messages in one packet
// ---------------------------------------------------------------------------

/// Reliable and unreliable messages interleaved, as the message header allows.
const MIXED: [u8; 70] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x03, // ack 3
    0x00, 0x00, 0x03, 0xe8, // timestamp 1000
    // offset 12: Leave#6 of player 0:2 (9 bytes)
    0x04, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x02,
    // offset 21: Update(1) of entity 0:1 at (-1, 2), 90°, health 50 (13 bytes)
    0x6e, 0x01, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0x00, 0x02, 0x00, 0x5a, 0x32,
    // offset 34: Chat#7 from 0:1, "gg" (12 bytes)
    0x05, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0x02, b'g', b'g',
    // offset 46: Collision of 0:1 and 0:3 at (0, -2) (13 bytes)
    0x69, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0xff, 0xfe,
    // offset 59: Synced#8 (5 bytes)
    0x0a, 0x00, 0x00, 0x00, 0x08, // offset 64: Full (1 byte)
    0x68, // offset 65: Disconnect#9 (5 bytes)
    0x02, 0x00, 0x00, 0x00, 0x09,
];

#[test]
fn interleaved_reliable_and_unreliable_messages() {
    let v = views(&MIXED, header(3, 1000), &[12, 21, 34, 46, 59, 64, 65]);
    let expected = vec![
        MessageRepr::Leave {
            seqno: 6,
            player: Id::new(0, 2),
        },
        MessageRepr::Update(vec![UpdateEntry {
            entity: Id::new(0, 1),
            x: -1,
            y: 2,
            orientation: 90,
            health: 50,
        }]),
        MessageRepr::Chat {
            seqno: 7,
            player: Id::new(0, 1),
            text: b"gg".to_vec(),
        },
        MessageRepr::Collision(Collision {
            entities: [Id::new(0, 1), Id::new(0, 3)],
            x: 0,
            y: -2,
        }),
        MessageRepr::Synced { seqno: 8 },
        MessageRepr::Full,
        MessageRepr::Disconnect { seqno: 9 },
    ];
    let seqnos: Vec<_> = v.iter().map(|m| m.seqno()).collect();
    assert_eq!(
        seqnos,
        [Some(6), None, Some(7), None, Some(8), None, Some(9)]
    );
    let tokens: Vec<_> = v.iter().map(|m| m.message.token().to_string()).collect();
    assert_eq!(
        tokens,
        [
            "Leave#6",
            "Update(1)",
            "Chat#7",
            "Collision",
            "Synced#8",
            "Full",
            "Disconnect#9"
        ]
    );
    let packet = Packet::new_checked(&MIXED).unwrap();
    assert_eq!(
        packet.summary().to_string(),
        "Leave#6 Update(1) Chat#7 Collision Synced#8 Full Disconnect#9"
    );
    no_violations(&v);
    both_ways(&MIXED, header(3, 1000), expected);
}

/// A header and nothing else is a valid, empty packet.
const EMPTY: [u8; 12] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x09, // ack 9
    0x00, 0x00, 0x00, 0x0a, // timestamp 10
];

#[test]
fn a_header_alone_is_an_empty_packet() {
    let v = views(&EMPTY, header(9, 10), &[]);
    assert!(v.is_empty());
    assert!(Packet::new_checked(&EMPTY).unwrap().is_empty());
    both_ways(&EMPTY, header(9, 10), vec![]);
}

// ---------------------------------------------------------------------------
// Decode errors
// ---------------------------------------------------------------------------

#[test]
fn short_header() {
    // appId and ack, and only three bytes of the timestamp: 11 bytes.
    let bytes = [
        0xf2, 0x70, 0x87, 0xc5, // appId
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, // timestamp cut short
    ];
    let err = DecodeError::ShortHeader { len: 11 };
    assert_eq!(Packet::new_checked(&bytes), Err(err));
    assert_eq!(PacketRepr::parse(&bytes), Err(err));
    assert_eq!(err.kind(), ErrorKind::ShortHeader);
    assert_eq!(err.offset(), 0);
    assert_eq!(err.msg_type(), None);
    assert_eq!(
        Packet::new_checked(&[]),
        Err(DecodeError::ShortHeader { len: 0 })
    );
    assert_eq!(
        err.to_string(),
        "payload of 11 bytes is shorter than the 12-byte header"
    );
}

#[test]
fn wrong_app_id() {
    // The appId written little-endian: a codec that got the byte order wrong
    // would accept it.
    let bytes = [
        0xc5, 0x87, 0x70, 0xf2, // appId in the wrong byte order
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, 0x00, // timestamp
        0x68, // Full
    ];
    let err = DecodeError::WrongAppId { found: 0xc587_70f2 };
    assert_eq!(Packet::new_checked(&bytes), Err(err));
    assert_eq!(PacketRepr::parse(&bytes), Err(err));
    assert_eq!(err.kind(), ErrorKind::WrongAppId);
    assert_eq!(err.offset(), 0);
    assert_eq!(
        err.to_string(),
        "appId 0xc58770f2 at offset 0 is not lwar's 0xf27087c5"
    );
}

/// Disconnect#1, then a Join whose name says 5 bytes but has only 2.
const TRUNCATED_STRING: [u8; 29] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x00, // ack
    0x00, 0x00, 0x00, 0x00, // timestamp
    // offset 12: Disconnect#1, whole
    0x02, 0x00, 0x00, 0x00, 0x01, // offset 17: Join#2
    0x03, // type 3 = Join
    0x00, 0x00, 0x00, 0x02, // seqno 2
    0x00, 0x00, 0x00, 0x01, // playerId 0:1
    0x05, // len 5 ...
    b'a', b'l', // ... but only 2 bytes of name: 12 of the 15 bytes needed
];

#[test]
fn truncated_string_keeps_what_decoded_before() {
    let packet = Packet::new_checked(&TRUNCATED_STRING).unwrap();
    let mut messages = packet.messages();
    let first = messages.next().unwrap().unwrap();
    assert_eq!(
        (first.offset, first.message),
        (12, Message::Disconnect { seqno: 1 })
    );
    assert_eq!(messages.undecoded(), None);
    let err = messages.next().unwrap().unwrap_err();
    assert_eq!(
        err,
        DecodeError::Truncated {
            offset: 17,
            msg_type: MessageType::Join,
            needed: 15,
            available: 12,
        }
    );
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert_eq!(err.offset(), 17);
    assert_eq!(err.msg_type(), Some(MessageType::Join));
    assert_eq!(
        err.to_string(),
        "Join at offset 17 is truncated: it needs 15 bytes, 12 are left"
    );
    assert!(
        messages.next().is_none(),
        "the iterator ends after an error"
    );
    assert_eq!(
        messages.undecoded(),
        Some((17, &TRUNCATED_STRING[17..])),
        "the rest of the packet is undecoded"
    );
    assert_eq!(PacketRepr::parse(&TRUNCATED_STRING), Err(err));
}

#[test]
fn truncated_fixed_part() {
    // Input needs 1 + 22 bytes; only the type, playerId and frameNo are there.
    let bytes = [
        0xf2, 0x70, 0x87, 0xc5, // appId
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, 0x00, // timestamp
        0x67, // type 103 = Input
        0x00, 0x00, 0x00, 0x01, // playerId
        0x00, 0x00, 0x00, 0x02, // frameNo, then nothing
    ];
    let err = DecodeError::Truncated {
        offset: 12,
        msg_type: MessageType::Input,
        needed: 23,
        available: 9,
    };
    let packet = Packet::new_checked(&bytes).unwrap();
    assert_eq!(packet.messages().collect::<Vec<_>>(), vec![Err(err)]);
    assert_eq!(PacketRepr::parse(&bytes), Err(err));

    // A reliable header cut inside its seqno: the header alone needs 5 bytes, and
    // a Chat needs its playerId and length byte before the text can be sized.
    let bytes = [
        0xf2, 0x70, 0x87, 0xc5, // appId
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, 0x00, // timestamp
        0x05, 0x00, 0x00, // Chat, 2 bytes of seqno
    ];
    let err = DecodeError::Truncated {
        offset: 12,
        msg_type: MessageType::Chat,
        needed: 10,
        available: 3,
    };
    let packet = Packet::new_checked(&bytes).unwrap();
    assert_eq!(packet.messages().collect::<Vec<_>>(), vec![Err(err)]);
}

#[test]
fn truncated_entries() {
    // Full, then an UpdatePos announcing 3 entries (2 + 24 bytes) with only 2 (2 + 16).
    let bytes = [
        0xf2, 0x70, 0x87, 0xc5, // appId
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, 0x00, // timestamp
        0x68, // offset 12: Full
        0x6f, // offset 13: UpdatePos
        0x03, // num 3
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, // [0]
        0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x02, // [1], then nothing
    ];
    let packet = Packet::new_checked(&bytes).unwrap();
    let got: Vec<_> = packet.messages().collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].as_ref().unwrap().message, Message::Full);
    assert_eq!(
        got[1],
        Err(DecodeError::Truncated {
            offset: 13,
            msg_type: MessageType::UpdatePos,
            needed: 26,
            available: 18,
        })
    );
}

#[test]
fn unknown_types() {
    for (type_id, name) in [
        (0u8, "zero"),
        (11, "after Synced"),
        (100, "100"),
        (114, "after UpdateCircle"),
        (255, "255"),
    ] {
        let bytes = [
            0xf2, 0x70, 0x87, 0xc5, // appId
            0x00, 0x00, 0x00, 0x00, // ack
            0x00, 0x00, 0x00, 0x00,    // timestamp
            0x68,    // offset 12: Full
            type_id, // offset 13: not a type of the specification
            0x00, 0x00, // whatever follows
        ];
        let packet = Packet::new_checked(&bytes).unwrap();
        let mut messages = packet.messages();
        assert_eq!(messages.next().unwrap().unwrap().message, Message::Full);
        let err = messages.next().unwrap().unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownType {
                offset: 13,
                type_id
            },
            "{name}"
        );
        assert_eq!(err.kind(), ErrorKind::UnknownType);
        assert_eq!(err.msg_type(), None);
        assert_eq!(messages.next(), None);
        assert_eq!(messages.undecoded(), Some((13, &bytes[13..])));
        assert_eq!(PacketRepr::parse(&bytes), Err(err));
    }
}

/// Synced#4, Full, then the deprecated type 102.
const DEPRECATED: [u8; 23] = [
    0xf2, 0x70, 0x87, 0xc5, // appId
    0x00, 0x00, 0x00, 0x02, // ack 2
    0x00, 0x00, 0x00, 0x10, // timestamp 16
    0x0a, 0x00, 0x00, 0x00, 0x04, // offset 12: Synced#4
    0x68, // offset 17: Full
    0x66, // offset 18: type 102, deprecated (once Update)
    0x01, 0x00, 0x00, 0x00, // what an old Update might have carried: undecoded
];

#[test]
fn deprecated_type_102() {
    let packet = Packet::new_checked(&DEPRECATED).unwrap();
    let mut messages = packet.messages();
    let decoded: Vec<_> = messages
        .by_ref()
        .map_while(Result::ok)
        .map(|m| (m.offset, m.message))
        .collect();
    assert_eq!(
        decoded,
        vec![(12, Message::Synced { seqno: 4 }), (17, Message::Full)]
    );
    assert_eq!(
        messages.undecoded(),
        Some((18, &[0x66, 0x01, 0x00, 0x00, 0x00][..]))
    );
    // The error itself, from a fresh iterator.
    let err = packet.messages().find_map(Result::err).unwrap();
    assert_eq!(err, DecodeError::DeprecatedType { offset: 18 });
    assert_eq!(err.kind(), ErrorKind::DeprecatedType);
    assert_eq!(err.offset(), 18);
    assert_eq!(err.to_string(), "deprecated message type 102 at offset 18");
    assert_eq!(PacketRepr::parse(&DEPRECATED), Err(err));
}

// ---------------------------------------------------------------------------
// Violations, and the boundaries that are not
// ---------------------------------------------------------------------------

/// The 12-byte header with ack 0 and timestamp 0, then `body`.
fn with_header(body: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0xf2, 0x70, 0x87, 0xc5, // appId
        0x00, 0x00, 0x00, 0x00, // ack
        0x00, 0x00, 0x00, 0x00, // timestamp
    ];
    p.extend_from_slice(body);
    p
}

/// A Chat#1 from 0:1 with `len` bytes of 'c': 10 + len bytes.
fn chat_bytes(len: u8) -> Vec<u8> {
    let mut m = vec![
        0x05, // Chat
        0x00, 0x00, 0x00, 0x01, // seqno 1
        0x00, 0x00, 0x00, 0x01, // playerId 0:1
        len,  // len
    ];
    m.extend(std::iter::repeat_n(b'c', len as usize));
    m
}

/// The violations of every message of `bytes`, which must decode.
fn violations_of(bytes: &[u8]) -> Vec<Violation> {
    let packet = Packet::new_checked(bytes).unwrap();
    let mut all: Vec<_> = packet.oversize().into_iter().collect();
    for m in packet.messages() {
        all.extend(m.unwrap().violations());
    }
    all
}

#[test]
fn oversize_and_exactly_512() {
    // 12 + (10 + 254) + (10 + 227) = 513 bytes.
    let mut body = chat_bytes(254);
    body.extend(chat_bytes(227));
    let over = with_header(&body);
    assert_eq!(over.len(), 513);
    assert_eq!(violations_of(&over), vec![Violation::Oversize { len: 513 }]);
    assert_eq!(violations_of(&over)[0].kind(), ViolationKind::Oversize);
    assert_eq!(violations_of(&over)[0].offset(), 0);
    // Still decodes whole.
    assert_eq!(PacketRepr::parse(&over).unwrap().messages.len(), 2);

    // 12 + (10 + 254) + (10 + 226) = 512 bytes: the limit itself is allowed.
    let mut body = chat_bytes(254);
    body.extend(chat_bytes(226));
    let exact = with_header(&body);
    assert_eq!(exact.len(), 512);
    assert_eq!(Packet::new_checked(&exact).unwrap().oversize(), None);
    assert_eq!(violations_of(&exact), vec![]);
}

#[test]
fn seqno_zero() {
    let bytes = with_header(&[
        0x0a, // Synced
        0x00, 0x00, 0x00, 0x00, // seqno 0: seqnos start at 1
        0x0a, // Synced
        0x00, 0x00, 0x00, 0x01, // seqno 1
    ]);
    let v = violations_of(&bytes);
    assert_eq!(
        v,
        vec![Violation::SeqnoZero {
            offset: 12,
            msg_type: MessageType::Synced
        }]
    );
    assert_eq!(v[0].kind(), ViolationKind::SeqnoZero);
    // It decodes and re-encodes all the same.
    both_ways(
        &bytes,
        header(0, 0),
        vec![
            MessageRepr::Synced { seqno: 0 },
            MessageRepr::Synced { seqno: 1 },
        ],
    );
}

#[test]
fn name_of_32_bytes_is_a_violation_31_is_not() {
    for (t, head) in [
        (MessageType::Connect, vec![0x01, 0x00, 0x00, 0x00, 0x01]),
        (
            MessageType::Join,
            vec![0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01],
        ),
        (
            MessageType::Name,
            vec![0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01],
        ),
    ] {
        let named = |len: u8| {
            let mut body = head.clone();
            body.push(len);
            body.extend(std::iter::repeat_n(b'n', len as usize));
            with_header(&body)
        };
        assert_eq!(
            violations_of(&named(32)),
            vec![Violation::NameTooLong {
                offset: 12,
                msg_type: t,
                len: 32
            }],
            "{t}"
        );
        assert_eq!(
            violations_of(&named(255)),
            vec![Violation::NameTooLong {
                offset: 12,
                msg_type: t,
                len: 255
            }],
            "{t}"
        );
        assert_eq!(violations_of(&named(31)), vec![], "{t}");
        assert_eq!(violations_of(&named(0)), vec![], "{t}: empty name");
    }
}

#[test]
fn chat_of_255_bytes_is_a_violation_254_is_not() {
    let v = violations_of(&with_header(&chat_bytes(255)));
    assert_eq!(
        v,
        vec![Violation::ChatTooLong {
            offset: 12,
            len: 255
        }]
    );
    assert_eq!(v[0].kind(), ViolationKind::ChatTooLong);
    assert_eq!(violations_of(&with_header(&chat_bytes(254))), vec![]);
    // A chat may be longer than a name.
    assert_eq!(violations_of(&with_header(&chat_bytes(32))), vec![]);
}

#[test]
fn invalid_utf8_in_every_string() {
    for head in [
        vec![0x01, 0x00, 0x00, 0x00, 0x01], // Connect#1
        vec![0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01], // Join#1 0:1
        vec![0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01], // Chat#1 0:1
        vec![0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01], // Name#1 0:1
    ] {
        let mut body = head.clone();
        body.extend([0x02, 0xc3, 0x28]); // len 2: a lead byte without its continuation
        let bytes = with_header(&body);
        let t = MessageType::from_u8(head[0]).unwrap();
        let v = violations_of(&bytes);
        assert_eq!(
            v,
            vec![Violation::InvalidUtf8 {
                offset: 12,
                msg_type: t
            }],
            "{t}"
        );
        assert_eq!(v[0].kind(), ViolationKind::InvalidUtf8);
        let repr = PacketRepr::parse(&bytes).unwrap();
        assert_eq!(repr.to_bytes(), bytes, "{t}: raw bytes survive");
    }
}

#[test]
fn three_violations_in_one_message() {
    let mut body = vec![
        0x01, // Connect
        0x00, 0x00, 0x00, 0x00, // seqno 0
        0x20, // len 32
    ];
    body.extend([0xff; 32]); // 32 bytes, none of them UTF-8
    let bytes = with_header(&body);
    assert_eq!(
        violations_of(&bytes),
        vec![
            Violation::SeqnoZero {
                offset: 12,
                msg_type: MessageType::Connect
            },
            Violation::NameTooLong {
                offset: 12,
                msg_type: MessageType::Connect,
                len: 32
            },
            Violation::InvalidUtf8 {
                offset: 12,
                msg_type: MessageType::Connect
            },
        ]
    );
}

#[test]
fn an_update_with_no_entries_breaks_no_rule() {
    // The specification's `num` is "the number of entity updates that
    // follow", a uint8: 0 is one of its values, and neither the
    // specification nor its notes forbid it. Full first so that the offsets
    // are not all 12.
    for t in [
        MessageType::Update,
        MessageType::UpdatePos,
        MessageType::UpdateRay,
        MessageType::UpdateCircle,
    ] {
        let bytes = with_header(&[
            0x68,   // offset 12: Full
            t.id(), // offset 13: the update message
            0x00,   // num 0
        ]);
        assert_eq!(violations_of(&bytes), vec![], "{t}");
    }
    // Nor an empty Stats.
    assert_eq!(violations_of(&with_header(&[0x65, 0x00])), vec![]);
}

#[test]
fn violation_names_and_messages_are_stable() {
    let v = Violation::ChatTooLong {
        offset: 40,
        len: 255,
    };
    assert_eq!(v.kind().name(), "chat-too-long");
    assert_eq!(
        v.to_string(),
        "Chat at offset 40 has a message of 255 bytes (must be < 255)"
    );
    let v = Violation::NameTooLong {
        offset: 12,
        msg_type: MessageType::Name,
        len: 32,
    };
    assert_eq!(
        v.to_string(),
        "Name at offset 12 has a name of 32 bytes (must be < 32)"
    );
}

#[test]
fn strings_display_quoted_with_only_what_needs_escaping() {
    let shown = |b: &[u8]| Str::new(b).to_string();
    assert_eq!(shown(b"alice"), r#""alice""#);
    assert_eq!(shown(b"it's"), r#""it's""#);
    assert_eq!(shown(br#"say "hi""#), r#""say \"hi\"""#);
    assert_eq!(shown("né".as_bytes()), "\"né\"");
    assert_eq!(shown(b"a\nb\\"), r#""a\nb\\""#);
    assert_eq!(shown(b"\xffok\xc3"), r#""\xffok\xc3""#);
}
