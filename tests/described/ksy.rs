//! The `.ksy` subset: valid descriptions load, every refused construct is
//! refused with its file, line and column and what to use instead; the shipped
//! descriptions decode hand-written packets (bytes written here from the
//! layouts, not by any encoder of lwarscope's); and no input makes any shipped
//! description panic.

use lwarscope::proto::described::{self, Described, ksy};
use lwarscope::proto::field::{Field, FieldSink, Value};
use proptest::prelude::*;

fn err(text: &str) -> ksy::KsyError {
    match described::parse("t.ksy", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

const HEAD: &str = "meta:\n  id: t\n  endian: be\n";
const TAIL: &str = "-lwarscope:\n  recognise:\n    port: 9000\n";

fn with_seq(seq: &str) -> String {
    format!("{HEAD}seq:\n{seq}{TAIL}")
}

#[test]
fn a_minimal_description_loads_with_its_fields() {
    let d = described::parse(
        "t.ksy",
        &with_seq("  - id: a\n    type: u2\n  - id: rest\n    size-eos: true\n"),
    )
    .unwrap();
    assert_eq!(d.ksy.id, "t");
    assert_eq!(d.ksy.sem.port, Some(9000));
    let names: Vec<_> = d.compiled.specs.iter().map(|s| s.name.as_str()).collect();
    // The packet itself is the root node, named as the protocol.
    assert_eq!(names, ["t", "t.a", "t.rest"]);
}

#[test]
fn every_shipped_description_loads() {
    for (file, text) in described::SHIPPED {
        let d = described::parse(file, text).unwrap_or_else(|e| panic!("{e}"));
        assert!(!d.compiled.specs.is_empty(), "{file}");
    }
}

/// (description, line, column, what the message says).
#[test]
fn refused_constructs_say_where_what_and_instead() {
    let cases: Vec<(String, usize, usize, &str)> = vec![
        (
            with_seq("  - id: a\n    type: b3\n"),
            6,
            11,
            "bit fields (`b3`) are not supported: read the whole byte (`u1`)",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    repeat: until\n"),
            7,
            13,
            "`repeat: until` is not supported: use `repeat: eos` or `repeat: expr`",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    process: xor(1)\n"),
            7,
            5,
            "`process` is not supported",
        ),
        (
            format!("{HEAD}seq:\n  - id: a\n    type: u1\ninstances:\n  x:\n    pos: 1\n{TAIL}"),
            7,
            1,
            "instances are not supported: put every field in `seq`",
        ),
        (
            with_seq("  - id: a\n    type: u1\n  - id: b\n    size: a + 1\n"),
            8,
            11,
            "`size`: `a + 1` is an expression; the subset takes the name of an earlier field",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    if: b == 1\n"),
            7,
            9,
            "`if`: `b` is not an earlier field of this `seq`",
        ),
        (
            with_seq(
                "  - id: a\n    type: u1\n  - id: s\n    size: 1\n  - id: b\n    type: u1\n    if: a == s\n",
            ),
            11,
            9,
            "`if: a == s`: `s` is not an integer field",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    if: a == 1 and a < 3\n"),
            7,
            9,
            "only one comparison is supported",
        ),
        (
            with_seq("  - id: a\n    type: foo\n"),
            6,
            11,
            "unknown type `foo`",
        ),
        (
            with_seq("  - id: Bad\n    type: u1\n"),
            5,
            9,
            "must be lower_snake_case",
        ),
        (
            with_seq("  - id: a\n    type: str\n"),
            5,
            5,
            "`type: str` needs `size`",
        ),
        (
            format!("meta:\n  id: t\nseq:\n  - id: a\n    type: u2\n{TAIL}"),
            5,
            11,
            "`u2` has no byte order: write `u2be`/`u2le`, or set `meta: {endian: be}`",
        ),
        (
            format!("{HEAD}seq:\n  - id: a\n    type: u1\n"),
            1,
            1,
            "no `-lwarscope:` key",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 70000\n"
            ),
            9,
            11,
            "`port: 70000` is not a UDP port",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 1\n  session: vessel_id\n"
            ),
            10,
            12,
            "`session: vessel_id`: use `address-pair` or `{field: FIELD}`",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 1\n  sequence:\n    field: b\n"
            ),
            11,
            12,
            "`sequence.field`: `b` is not an integer field of the top-level `seq`",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 1\n  sequence:\n    field: a\n    recency:\n      ahead: 256\n"
            ),
            13,
            14,
            "`ahead: 256` must be 1 or more and below the cycle (2^8)",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: t\ntypes:\n  t:\n    seq:\n      - id: b\n        type: t\n{TAIL}"
            ),
            10,
            9,
            "type `t` contains itself: recursive types are not supported",
        ),
        (
            with_seq("  - id: a\n    type: u1\n  - id: a\n    type: u1\n"),
            7,
            5,
            "field `a` appears twice",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    valid:\n      between: 3\n"),
            8,
            7,
            "`between` is not supported in `valid` (supported: eq, min, max, any-of)",
        ),
        (
            with_seq(
                "  - id: a\n    type: u1\n    valid:\n      max: b\n  - id: b\n    type: u1\n",
            ),
            8,
            12,
            "`valid.max`: `b` is not an earlier field of this `seq`",
        ),
        (
            with_seq(
                "  - id: a\n    type: u1\n  - id: b\n    type: u1\n    valid:\n      max: a + 1\n",
            ),
            10,
            12,
            "`valid.max`: `a + 1` is an expression",
        ),
        (
            with_seq(
                "  - id: a\n    type: u1\n  - id: c\n    type: u1\n  - id: b\n    type: u1\n    valid:\n      min: a\n      max: c\n",
            ),
            13,
            12,
            "`valid` names at most one field",
        ),
        (
            with_seq(
                "  - id: a\n    type: u8\n  - id: b\n    type: u1\n    valid:\n      min: a\n",
            ),
            10,
            12,
            "`valid.min`: `a` has 8 bytes: a bound field has at most 4 (u4, s4)",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 1\n  server:\n    drops: [0, 255]\n"
            ),
            11,
            12,
            "`drops` takes `{ipv4-last-byte: [BYTES]}`",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: u1\n-lwarscope:\n  recognise:\n    port: 1\n  server:\n    drops:\n      ipv4-last-byte: [0, 256]\n"
            ),
            12,
            27,
            "`ipv4-last-byte`: 256 is not a byte (0-255)",
        ),
        (
            "meta:\n  id: t\nseq: [\n".to_owned(),
            4,
            1,
            "not valid YAML",
        ),
        (
            // An anchored mapping: the parser places it at its first entry.
            format!("{HEAD}seq:\n  - &x\n    id: a\n    type: u1\n{TAIL}"),
            6,
            7,
            "anchors and tags are not supported",
        ),
        (
            // The 17th field with a `valid` (the analysis follows 16 apart).
            with_seq(&(0..17).fold(String::new(), |seq, i| {
                seq + &format!("  - id: f{i}\n    type: u1\n    valid: 0\n")
            })),
            53,
            5,
            "`t.f16`: more than 16 fields with `valid`",
        ),
        (
            // One field with a `valid`, in a type used 17 times: 17 fields.
            format!(
                "{HEAD}seq:\n{}types:\n  r:\n    seq:\n      - id: v\n        type: u1\n        valid: 0\n{TAIL}",
                (0..17).fold(String::new(), |seq, i| seq
                    + &format!("  - id: u{i}\n    type: r\n"))
            ),
            42,
            9,
            "`t.u16.v`: more than 16 fields with `valid` (each use of a type counts its own)",
        ),
    ];
    for (text, line, col, says) in cases {
        let e = err(&text);
        assert!(
            e.msg.contains(says),
            "expected `{says}`, got `{e}` for\n{text}"
        );
        assert_eq!((e.line, e.col), (line, col), "{e} for\n{text}");
        assert!(
            e.to_string().starts_with(&format!("t.ksy:{line}:{col}: ")),
            "{e}"
        );
    }
}

#[test]
fn if_takes_fields_and_enum_values_whose_names_hold_and_or_not() {
    // `and`, `or` and `not` are refused as words, not inside names: before,
    // `color == vector_len` and `kind == kind::handshake` were refused as
    // "only one comparison", and so was `knot != 0`.
    let text = format!(
        "{HEAD}seq:\n  - id: kind\n    type: u1\n    enum: kind\n  - id: color\n    type: u1\n  - id: vector_len\n    type: u1\n  - id: knot\n    type: u1\n    if: color == vector_len\n  - id: band\n    type: u1\n    if: kind == kind::handshake\n  - id: torque\n    type: u1\n    if: knot != 0\nenums:\n  kind:\n    1: handshake\n    2: order\n{TAIL}"
    );
    let d = described::parse("t.ksy", &text).unwrap_or_else(|e| panic!("{e}"));
    let conds: Vec<_> = d.ksy.types[0].attrs.iter().map(|a| a.cond).collect();
    use ksy::{Cond, Op, Operand};
    assert_eq!(
        conds,
        [
            None,
            None,
            None,
            Some(Cond {
                field: 1,
                op: Op::Eq,
                value: Operand::Field(2)
            }),
            Some(Cond {
                field: 0,
                op: Op::Eq,
                value: Operand::Number(1)
            }),
            Some(Cond {
                field: 3,
                op: Op::Ne,
                value: Operand::Number(0)
            }),
        ]
    );
    // Two comparisons are still refused, whichever word joins them.
    for joined in [
        "color == 1 and knot < 3",
        "color == 1 or knot",
        "not color",
        "(color) == 1",
    ] {
        let e = err(&text.replace("color == vector_len", joined));
        assert!(e.msg.contains("only one comparison is supported"), "{e}");
        assert_eq!((e.line, e.col), (14, 9), "{e}");
    }
}

fn shipped(id: &str) -> &'static Described {
    described::loaded()
        .iter()
        .find(|d| d.ksy.id == id)
        .copied()
        .unwrap_or_else(|| panic!("{id} is shipped"))
}

/// Every field as `name[index]@offset+len=value`.
#[derive(Default)]
struct Lines(Vec<String>);
impl FieldSink for Lines {
    fn field(&mut self, f: Field<'_>) {
        let i = f.index.map(|i| format!("[{i}]")).unwrap_or_default();
        let v = match f.value {
            Value::None => String::new(),
            v => format!("={v}"),
        };
        self.0
            .push(format!("{}{i}@{}+{}{v}", f.def.name, f.offset, f.len));
    }
}

fn decode(id: &str, bytes: &[u8]) -> (Vec<String>, Result<(), String>) {
    let d = shipped(id);
    let mut lines = Lines::default();
    let r = d
        .info()
        .dissector
        .fields(bytes, &mut lines)
        .map_err(|e| e.to_string());
    (lines.0, r)
}

#[test]
fn a_vessel_input_packet_written_by_hand() {
    #[rustfmt::skip]
    let bytes = [
        3, b'1', b'.', b'0',        // version_len, protocol_version "1.0"
        1,                          // msg_type: vessel_input
        255,                        // sync_number
        1, 0, 0, 0, 7,              // has_vessel_id, vessel_id 7
        0x3e, 0x80, 0, 0,           // throttle_left 0.25
        0x3f, 0x40, 0, 0,           // throttle_right 0.75
        0b0000_0101,                // thrusters
        1,                          // gun_trigger
    ];
    let (fields, r) = decode("vessel_fixed", &bytes);
    assert_eq!(r, Ok(()));
    assert_eq!(
        fields,
        [
            "vessel_fixed@0+21",
            "vessel_fixed.version_len@0+1=3",
            "vessel_fixed.protocol_version@1+3=\"1.0\"",
            "vessel_fixed.msg_type@4+1=vessel_input (1)",
            "vessel_fixed.sync_number@5+1=255",
            "vessel_fixed.body@6+0",
            "vessel_fixed.body.has_vessel_id@6+1=1",
            "vessel_fixed.body.vessel_id@7+4=7",
            "vessel_fixed.body.input@11+0",
            "vessel_fixed.body.input.throttle_left@11+4=0.25",
            "vessel_fixed.body.input.throttle_right@15+4=0.75",
            "vessel_fixed.body.input.thrusters@19+1=5",
            "vessel_fixed.body.input.gun_trigger@20+1=1",
        ]
    );
}

#[test]
fn an_environment_packet_with_sensor_readings_written_by_hand() {
    #[rustfmt::skip]
    let bytes = [
        3, b'1', b'.', b'0', 2, 0,  // version, environment_state, sync 0
        1, 0,                       // join_status, no vessel id
        0x3f, 0, 0, 0, 0, 0, 0, 0,  // throttles 0.5, 0
        0, 0,                       // thrusters, gun
        0xff, 0xff, 0xff, 0xf6,     // health -10
        1,                          // object_count
        2,                          // object_type: bullet
        0x41, 0x20, 0, 0,           // pos_x 10
        0xc0, 0, 0, 0,              // pos_y -2
        0x40, 0x49, 0x0f, 0xdb,     // orientation pi
        0, 0, 0, 0, 0x3f, 0x80, 0, 0, // vel 0, 1
    ];
    let (fields, r) = decode("vessel_fixed", &bytes);
    assert_eq!(r, Ok(()));
    assert!(
        fields.contains(&"vessel_fixed.body.health@18+4=-10".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"vessel_fixed.body.objects[0]@23+0".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"vessel_fixed.body.objects.object_type@23+1=bullet (2)".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"vessel_fixed.body.objects.orientation@32+4=3.1415927".to_owned()),
        "{fields:?}"
    );
    assert_eq!(
        fields.last().unwrap(),
        "vessel_fixed.body.objects.vel_y@40+4=1"
    );
    // The packet line's message: its type, its number, every field, an
    // element's fields with their index.
    let mut seen = Vec::new();
    shipped("vessel_fixed")
        .info()
        .dissector
        .messages(&bytes, &mut |m| {
            seen.push((m.type_name, m.seqno, m.text.to_string()))
        })
        .unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0, seen[0].1), ("environment_state", Some(0)));
    assert!(
        seen[0].2.ends_with("health=-10 object_count=1 [0].object_type=bullet (2) [0].pos_x=10 [0].pos_y=-2 [0].orientation=3.1415927 [0].vel_x=0 [0].vel_y=1"),
        "{}",
        seen[0].2
    );
    // One byte less: the layout no longer fits, said with field and offset.
    let (_, r) = decode("vessel_fixed", &bytes[..bytes.len() - 1]);
    assert_eq!(
        r,
        Err(
            "short: field `vessel_fixed.body.objects.vel_y` at offset 40 is truncated: it needs 4 bytes, 3 are left"
                .into()
        )
    );
    // One byte more: trailing bytes.
    let mut long = bytes.to_vec();
    long.push(0);
    let (_, r) = decode("vessel_fixed", &long);
    assert_eq!(
        r,
        Err("trailing-bytes: 1 bytes after the layout ends at offset 44".into())
    );
}

#[test]
fn a_timewarp_update_and_an_unknown_flag_written_by_hand() {
    #[rustfmt::skip]
    let mut bytes = vec![
        10, 1,                      // UPDATE_GAME_DATA, one ship
        1, 9,                       // update_flag, ship_id
    ];
    bytes.extend([0, 0, 0x80, 0x3f]); // pos_x 1.0 little-endian
    bytes.extend([0; 12]); // pos_y, vel_x, vel_y
    bytes.extend([127, 0b1001, 18, 40, 3, 0, 0]); // angle..reserved
    let (fields, r) = decode("timewarp", &bytes);
    assert_eq!(r, Ok(()));
    assert_eq!(fields[0], "timewarp@0+27");
    assert_eq!(fields[1], "timewarp.flag@0+1=update_game_data (10)");
    assert!(
        fields.contains(&"timewarp.body.ships.pos_x@4+4=1".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"timewarp.body.ships.angle@20+1=127".to_owned()),
        "{fields:?}"
    );
    assert_eq!(
        fields.last().unwrap(),
        "timewarp.body.ships.reserved@25+2=0"
    );
    let (_, r) = decode("timewarp", &[0x42, 0]);
    assert_eq!(
        r,
        Err("unknown-type: field `timewarp.flag` at offset 0: 66 is not in its enum".into())
    );
}

#[test]
fn the_last_game_state_chunk_carries_its_data_then_the_checksum_and_crc() {
    // The document: the last packet of the game state ("packet 4 of 6")
    // carries data and a checksum and CRC of all of it; the others data
    // alone. `if: this_packet == total_packets` compares two fields.
    #[rustfmt::skip]
    let last = [
        6,                          // CONFIRMED_CONNECTION_RESPONSE
        3, 3,                       // this_packet 3 of total_packets 3
        2, 0,                       // chunk_len 2, little-endian
        0xaa, 0xbb,                 // game_state
        0x78, 0x56, 0x34, 0x12,     // checksum 0x12345678
        0xf0, 0xde, 0xbc, 0x9a,     // crc 0x9abcdef0
    ];
    let (fields, r) = decode("timewarp", &last);
    assert_eq!(r, Ok(()), "{fields:?}");
    assert!(
        fields.contains(&"timewarp.body.checksum@7+4=305419896".to_owned()),
        "{fields:?}"
    );
    assert_eq!(fields.last().unwrap(), "timewarp.body.crc@11+4=2596069104");
    // Chunk 2 of 3: the same eight bytes after its data are not its own.
    let mut middle = last;
    middle[1] = 2;
    let (fields, r) = decode("timewarp", &middle);
    assert!(!fields.iter().any(|f| f.contains("checksum")), "{fields:?}");
    assert_eq!(
        r,
        Err("trailing-bytes: 8 bytes after the layout ends at offset 7".into())
    );
    // The last chunk without its checksum is cut short.
    let (_, r) = decode("timewarp", &last[..9]);
    assert!(
        r.is_err_and(|e| e.contains("checksum")),
        "cut at the checksum"
    );
}

#[test]
fn a_starstrike_heartbeat_and_a_wrong_magic_written_by_hand() {
    #[rustfmt::skip]
    let bytes = [
        b'S', b'T', b'R', b'S',     // protocolId
        0x00, 0x05,                 // Heartbeat
        0xff, 0xff,                 // sequenceNumber 65535
        0x00, 0x00, 0x00, 0x03,     // ackBits
        0x00, 0x00, 0x03, 0xe8,     // timestamp 1000
    ];
    let (fields, r) = decode("strs_ksy", &bytes);
    assert_eq!(r, Ok(()));
    assert_eq!(
        fields,
        [
            "strs_ksy@0+16",
            "strs_ksy.protocol_id@0+4=0x53545253",
            "strs_ksy.packet_type@4+2=heartbeat (5)",
            "strs_ksy.sequence_number@6+2=65535",
            "strs_ksy.ack_bits@8+4=3",
            "strs_ksy.payload@12+0",
            "strs_ksy.payload.timestamp@12+4=1000",
        ]
    );
    let mut bad = bytes;
    bad[0] = b'X';
    let (_, r) = decode("strs_ksy", &bad);
    assert_eq!(
        r,
        Err("contents: field `strs_ksy.protocol_id` at offset 0: not the described magic".into())
    );
}

/// Findings of the engine on `packets` (source, destination, payload), 10 ms
/// apart from frame 1: (label, frame, direction, detail).
fn findings(packets: &[(&str, &str, Vec<u8>)]) -> Vec<(String, u64, &'static str, String)> {
    use lwarscope::capture::{Datagram, Timestamp};
    use lwarscope::engine::{Finding, Observer};
    #[derive(Default)]
    struct Collect(Vec<Finding>);
    impl Observer for Collect {
        fn finding(&mut self, f: &Finding) {
            self.0.push(*f);
        }
    }
    let mut engine = lwarscope::proto::engine(Default::default());
    let mut seen = Collect::default();
    for (i, (src, dst, payload)) in packets.iter().enumerate() {
        let dg = Datagram::new(
            i as u64 + 1,
            Timestamp::from_millis(i as u64 * 10),
            src.parse().unwrap(),
            dst.parse().unwrap(),
            payload,
        );
        assert!(engine.observe(&dg, &mut seen).is_some(), "frame {}", i + 1);
    }
    engine.finish(&mut seen);
    seen.0
        .iter()
        .map(|f| {
            (
                f.label().to_string(),
                f.frame,
                f.direction.name(),
                f.detail.to_string(),
            )
        })
        .collect()
}

#[test]
fn a_game_state_chunk_numbered_past_its_total_or_from_zero_is_a_violation() {
    // The document numbers the game state's chunks "like packet 4 of 6": from
    // 1, never past the total.
    const SERVER: &str = "10.0.0.1:7711";
    const CLIENT: &str = "10.0.3.1:41000";
    #[rustfmt::skip]
    let packets = vec![
        // Packet 1 of 2, two bytes of game state: kept.
        (SERVER, CLIENT, vec![6, 1, 2, 2, 0, 0xaa, 0xbb]),
        // "Packet 3 of 2", no data.
        (SERVER, CLIENT, vec![6, 3, 2, 0, 0]),
        // Packet 2 of 2, one byte, then the checksum and the CRC: kept.
        (SERVER, CLIENT, vec![6, 2, 2, 1, 0, 0xcc, 1, 0, 0, 0, 2, 0, 0, 0]),
        // "Packet 0 of 2".
        (SERVER, CLIENT, vec![6, 0, 2, 0, 0]),
        // Packet 1 of 1: kept, and it ends the run of the above.
        (SERVER, CLIENT, vec![6, 1, 1, 0, 0, 9, 0, 0, 0, 7, 0, 0, 0]),
    ];
    assert_eq!(
        findings(&packets),
        [
            (
                "violation/valid".to_owned(),
                2,
                "s2c",
                "`timewarp.body.total_packets` = 2 at offset 2, not >= this_packet (3)".to_owned()
            ),
            (
                "violation/valid".to_owned(),
                4,
                "s2c",
                "`timewarp.body.this_packet` = 0 at offset 1, not >= 1".to_owned()
            ),
        ]
    );
}

#[test]
fn an_initial_connection_response_is_flag_and_id_unless_the_game_type_is_unknown() {
    // "[sizeof(FLAG) + sizeof(ID)]", or with id == RESPONSE_UNKNOWN_GAME_TYPE
    // "+ sizeof(GAME_TYPE_DESC)".
    let (fields, r) = decode("timewarp", &[4, 7, 0]);
    assert_eq!(r, Ok(()));
    assert_eq!(fields.last().unwrap(), "timewarp.body.id@1+2=7 (unknown)");
    #[rustfmt::skip]
    let unknown = [
        4,                          // INITIAL_CONNECTION_RESPONSE
        0xfe, 0xff,                 // RESPONSE_UNKNOWN_GAME_TYPE (65534)
        3, b'c', b't', b'f',        // desc_len, game_type_desc "ctf"
    ];
    let (fields, r) = decode("timewarp", &unknown);
    assert_eq!(r, Ok(()));
    assert_eq!(
        &fields[3..],
        [
            "timewarp.body.id@1+2=response_unknown_game_type (65534)",
            "timewarp.body.desc_len@3+1=3",
            "timewarp.body.game_type_desc@4+3=\"ctf\"",
        ]
    );
    // A description after any other ID is not one of the two shapes.
    let (_, r) = decode("timewarp", &[4, 0xfc, 0xff, 3, b'c', b't', b'f']);
    assert_eq!(
        r,
        Err("trailing-bytes: 4 bytes after the layout ends at offset 3".into())
    );
}

#[test]
fn a_sensor_object_neither_ship_nor_bullet_is_a_violation() {
    #[rustfmt::skip]
    let mut env = vec![
        3, b'1', b'.', b'0', 2, 9,  // version "1.0", environment_state, sync 9
        1, 0,                       // join_status, no vessel id
        0, 0, 0, 0, 0, 0, 0, 0,     // throttles 0, 0
        0, 0,                       // thrusters, gun
        0, 0, 0, 100,               // health 100
        2,                          // object_count
        1,                          // object_type: ship
    ];
    env.extend([0; 20]); // pos, orientation, vel
    env.push(3); // object_type 3: not in the enum (at byte 44)
    env.extend([0; 20]);
    let (fields, r) = decode("vessel_fixed", &env);
    assert_eq!(
        r,
        Ok(()),
        "it decodes: the value breaks the rule, not the layout"
    );
    assert!(
        fields.contains(&"vessel_fixed.body.objects.object_type@44+1=3 (unknown)".to_owned()),
        "{fields:?}"
    );
    let got = findings(&[("10.0.0.1:7600", "10.0.2.1:40000", env)]);
    assert_eq!(
        got,
        [(
            "violation/valid".to_owned(),
            1,
            "s2c",
            "`vessel_fixed.body.objects.object_type` = 3 at offset 44, not one of 1, 2".to_owned()
        )]
    );
}

#[test]
fn the_timewarp_server_answering_an_address_ending_in_0_or_255_is_one_violation() {
    // "The server should not reply to an IP address that ends in 255 or 0";
    // "IP addresses ending in 0 or 255 are dropped".
    const SERVER: &str = "10.0.0.1:7711";
    let ping = vec![1u8];
    #[rustfmt::skip]
    let reply = vec![
        2,                          // PING_REPLY
        1, 8, 2,                    // players, max players, game type
        1, b'x',                    // name_len, server_name "x"
    ];
    let packets = vec![
        ("10.0.3.255:5000", SERVER, ping.clone()),
        (SERVER, "10.0.3.255:5000", reply.clone()),
        ("10.0.3.255:5000", SERVER, ping.clone()),
        (SERVER, "10.0.3.255:5000", reply.clone()),
        ("10.0.4.0:5000", SERVER, ping.clone()),
        (SERVER, "10.0.4.0:5000", reply.clone()),
        // Other addresses are answered.
        ("10.0.3.1:5000", SERVER, ping.clone()),
        (SERVER, "10.0.3.1:5000", reply.clone()),
        ("10.0.3.250:5000", SERVER, ping.clone()),
        (SERVER, "10.0.3.250:5000", reply.clone()),
        // An IPv6 address ends in no such byte: not judged.
        ("[2001:db8::ff]:5000", "[2001:db8::1]:7711", ping.clone()),
        ("[2001:db8::1]:7711", "[2001:db8::ff]:5000", reply.clone()),
        // A client sending from a dropped address breaks nothing: the
        // server, unanswering, keeps the rule.
        ("10.0.5.0:5000", SERVER, ping),
    ];
    let mut got = findings(&packets);
    got.sort();
    assert_eq!(
        got,
        [
            (
                "violation/dropped-address".to_owned(),
                2,
                "s2c",
                "the server sent to 10.0.3.255: an address ending in 255, which it drops; 2 packets until frame 4".to_owned()
            ),
            (
                "violation/dropped-address".to_owned(),
                6,
                "s2c",
                "the server sent to 10.0.4.0: an address ending in 0, which it drops".to_owned()
            ),
        ]
    );
}

#[test]
fn a_message_from_the_side_that_does_not_send_it_is_one_violation_per_direction() {
    // Vessel: "Each vessel will send its input state [...] The environment
    // will send to each vessel the ship's gameplay input, the ship's sensor
    // data and any administrative state."
    const ENV: &str = "10.0.0.1:7600";
    const VESSEL: &str = "10.0.2.1:40000";
    #[rustfmt::skip]
    let input = |sync: u8| vec![
        3, b'1', b'.', b'0', 1, sync, // "1.0", vessel_input, sync
        0,                          // no vessel id
        0, 0, 0, 0, 0, 0, 0, 0,     // throttles 0, 0
        0, 0,                       // thrusters, gun
    ];
    #[rustfmt::skip]
    let version_only = |sync: u8| vec![3, b'2', b'.', b'0', 3, sync];
    let packets = vec![
        (VESSEL, ENV, input(1)),
        // The environment echoing a vessel's input packet: the vessel's type.
        (ENV, VESSEL, input(1)),
        (ENV, VESSEL, version_only(2)),
        (ENV, VESSEL, input(3)),
        // A vessel sending the environment's version-only packet.
        (VESSEL, ENV, version_only(2)),
    ];
    let got = findings(&packets);
    assert_eq!(
        got,
        [
            (
                "violation/wrong-direction".to_owned(),
                5,
                "c2s",
                "`version_only` (3) from the client: only the server sends it".to_owned()
            ),
            (
                "violation/wrong-direction".to_owned(),
                2,
                "s2c",
                "`vessel_input` (1) from the server: only the client sends it; 2 packets until frame 4".to_owned()
            ),
        ]
    );
    // Timewarp, the document's arrows: a PING_REPLY comes from the server.
    let got = findings(&[
        ("10.0.3.1:41000", "10.0.0.1:7711", vec![2, 0, 8, 1, 0]),
        ("10.0.0.1:7711", "10.0.3.1:41000", vec![1]),
    ]);
    assert_eq!(
        got,
        [
            (
                "violation/wrong-direction".to_owned(),
                1,
                "c2s",
                "`ping_reply` (2) from the client: only the server sends it".to_owned()
            ),
            (
                "violation/wrong-direction".to_owned(),
                2,
                "s2c",
                "`ping_request` (1) from the server: only the client sends it".to_owned()
            ),
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn arbitrary_bytes_never_panic_any_shipped_description(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        head in 0usize..3,
    ) {
        for d in described::loaded() {
            let dis = d.info().dissector;
            // Also with a plausible start, to get past the first fields.
            let mut p = match (d.ksy.id.as_str(), head) {
                ("strs_ksy", 1) => b"STRS".to_vec(),
                ("vessel_fixed", 1) => vec![3, b'1', b'.', b'0', 2],
                ("timewarp", 1) => vec![10],
                _ => Vec::new(),
            };
            p.extend(&bytes);
            let _ = dis.fields(&p, &mut Lines::default());
            let _ = dis.messages(&p, &mut |m| { let _ = m.text.to_string(); });
            let _ = dis.header(&p, &mut |_| {});
            dis.tree(&p, &mut |_| {});
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The analysis too: arbitrary datagrams to every shipped description's
    /// port (Starstrike described decoded on 7777) never panic the engine.
    #[test]
    fn arbitrary_datagrams_never_panic_the_analysis(
        packets in proptest::collection::vec(
            (0usize..3, any::<bool>(), proptest::collection::vec(any::<u8>(), 0..120)),
            1..60,
        ),
    ) {
        use lwarscope::capture::{Datagram, Timestamp};
        let d: lwarscope::proto::DecodeAs = "udp.port==7777,strs_ksy".parse().unwrap();
        let mut engine = lwarscope::proto::engine_with(Default::default(), &[d]);
        for (i, (port, up, mut payload)) in packets.into_iter().enumerate() {
            let port = [7600u16, 7711, 7777][port];
            if port == 7777 && i % 2 == 0 {
                let mut p = b"STRS".to_vec();
                p.append(&mut payload);
                payload = p;
            }
            let (client, server) = (
                std::net::SocketAddr::from(([10, 0, 0, 2], 40000)),
                std::net::SocketAddr::from(([10, 0, 0, 1], port)),
            );
            let (src, dst) = if up { (client, server) } else { (server, client) };
            let ts = Timestamp::from_millis(i as u64 * 700);
            let dg = Datagram::new(i as u64 + 1, ts, src, dst, &payload)
                .with_payload_len(payload.len() + (i % 3));
            prop_assert!(engine.observe(&dg, &mut ()).is_some());
        }
        let _ = engine.finish(&mut ());
    }
}

#[test]
fn a_packet_of_an_unknown_type_keeps_its_sequence_number_malformed_not_lost() {
    use lwarscope::proto::described::sim::vessel_input;
    const VESSEL: &str = "10.0.2.1:40000";
    const ENV: &str = "10.0.0.1:7600";
    // Sync numbers 10 to 14; the third's message type is 9, outside the
    // enum (the sync number is before the body, at offset 5).
    let packets: Vec<_> = (10u8..15)
        .map(|sync| {
            let mut p = vessel_input(sync, Some(7), 0.25, 0.75);
            if sync == 12 {
                p[4] = 9;
            }
            (VESSEL, ENV, p)
        })
        .collect();
    assert_eq!(
        findings(&packets),
        [(
            "malformed".to_owned(),
            3,
            "c2s",
            "unknown-type: field `vessel_fixed.msg_type` at offset 4: 9 is not in its enum"
                .to_owned()
        )]
    );
    // Its dissection reads the sync number too, then stops at the body.
    let (fields, r) = decode("vessel_fixed", &packets[2].2);
    assert!(
        fields.iter().any(|f| f.contains("sync_number")),
        "{fields:?}"
    );
    assert!(!fields.iter().any(|f| f.contains("body")), "{fields:?}");
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn the_top_level_doc_counts_towards_what_a_description_may_hold() {
    let mib16 = described::ksy::MAX_UNFOLDED_BYTES;
    let t = std::time::Instant::now();
    // A top-level doc of 16 MiB and one byte: refused at the doc.
    let text = format!(
        "{HEAD}doc: {}\n{}",
        "x".repeat(mib16 + 1),
        with_seq("  - id: a\n    type: u1\n").trim_start_matches(HEAD)
    );
    let e = err(&text);
    assert_eq!(
        e.to_string(),
        "t.ksy:4:6: a `doc` of more than 16 MiB: shorten it"
    );
    // 16 MiB less 16 bytes of top-level doc, and a field's doc of 64: over
    // the bound in all (the field's doc, name and type count beside it).
    let text = format!(
        "{HEAD}doc: {}\n{}",
        "x".repeat(mib16 - 16),
        with_seq(&format!(
            "  - id: a\n    type: u1\n    doc: {}\n",
            "y".repeat(64)
        ))
        .trim_start_matches(HEAD)
    );
    let e = err(&text);
    assert!(
        e.to_string().starts_with("t.ksy:6:5: `t.a`: the description unfolds into more than 16 MiB of names, docs and contents"),
        "{e}"
    );
    // Two 16 MiB documents, parsed in about 13 s by a debug build.
    assert!(t.elapsed().as_secs() < 60, "{:?}", t.elapsed());
}

#[test]
fn a_repeat_over_elements_that_may_take_no_bytes_is_refused_at_load() {
    // Each element is a type of raw bytes to the end of the element: the
    // first takes them all, the next none. With `n` = 1000 the decoder read
    // one element and stopped, without a word. Refused where the repeat is.
    let text = format!(
        "{HEAD}seq:\n  - id: n\n    type: u2\n  - id: items\n    type: rest\n    repeat: expr\n    repeat-expr: n\ntypes:\n  rest:\n    seq:\n      - id: data\n        size-eos: true\n{TAIL}"
    );
    let t = std::time::Instant::now();
    let says = "`t.items`: `repeat` over elements that may take no bytes";
    let e = described::parse("t.ksy", &text).map(|_| ()).unwrap_err();
    assert_eq!((e.line, e.col), (7, 5), "{e}");
    assert!(e.msg.starts_with(says), "{e}");
    // Raw bytes sized by a field, and a switch with no default: the same.
    for (element, line) in [
        (
            "  - id: len\n    type: u1\n  - id: items\n    size: len\n    repeat: eos\n",
            7,
        ),
        (
            "  - id: k\n    type: u1\n  - id: items\n    type:\n      switch-on: k\n      cases:\n        1: one\n    repeat: expr\n    repeat-expr: 3\n",
            7,
        ),
    ] {
        let text = format!(
            "{HEAD}seq:\n{element}types:\n  one:\n    seq:\n      - id: x\n        type: u1\n{TAIL}"
        );
        let e = described::parse("t.ksy", &text).map(|_| ()).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(
            e.msg.starts_with("`t.items`: `repeat` over elements"),
            "{e}"
        );
    }
    // Elements that take a byte at least load: a NUL-terminated string, a
    // switch whose every case and default take bytes, a fixed size.
    for element in [
        "  - id: items\n    type: strz\n    encoding: ASCII\n    repeat: eos\n",
        "  - id: k\n    type: u1\n  - id: items\n    type:\n      switch-on: k\n      cases:\n        1: one\n        _: one\n    repeat: expr\n    repeat-expr: 3\n",
        "  - id: len\n    type: u1\n  - id: items\n    size: 2\n    repeat: eos\n",
    ] {
        let text = format!(
            "{HEAD}seq:\n{element}types:\n  one:\n    seq:\n      - id: x\n        type: u1\n{TAIL}"
        );
        described::parse("t.ksy", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    assert!(t.elapsed().as_secs() < 5);
}

/// The `-lwarscope:` keys that are refused, each with its line, column and
/// what to write instead (after a layout of an enum field `a` and a `u2`
/// field `s`; the keys start on line 14).
#[test]
fn refused_keys_say_where_and_what() {
    let head = format!(
        "{HEAD}seq:\n  - id: a\n    type: u1\n    enum: k\n  - id: s\n    type: u2\nenums:\n  k:\n    1: one\n-lwarscope:\n"
    );
    let cases: [(&str, usize, usize, &str); 13] = [
        (
            "  title: t\n",
            14,
            8,
            "`-lwarscope` needs `recognise:` (`port:`, `magic:` with `offset:`, or both)",
        ),
        (
            "  recognise: {}\n",
            14,
            14,
            "`recognise` needs `port:` or `magic:`",
        ),
        (
            "  recognise: {port: 1, offset: -1}\n",
            14,
            32,
            "`offset` is negative",
        ),
        (
            "  recognise: {port: 1}\n  session: {}\n",
            15,
            12,
            "`session` takes `address-pair` or `{field: FIELD}`",
        ),
        (
            "  recognise: {port: 1}\n  session: {field: x.y}\n",
            15,
            20,
            "`session.field`: `x.y`: name a field of the top-level `seq` (nested fields are not supported here)",
        ),
        (
            "  recognise: {port: 1}\n  ack: {cumulative: s}\n",
            15,
            8,
            "`ack` needs `sequence`: acks name the peer's numbers",
        ),
        (
            "  recognise: {port: 1}\n  sequence: {field: s}\n  ack: {bitfield: s}\n",
            16,
            8,
            "`ack.bitfield` needs `anchor:` (the field bit 0 counts back from)",
        ),
        (
            "  recognise: {port: 1}\n  sequence: {field: s}\n  ack: {}\n",
            16,
            8,
            "`ack` takes `none`, `{cumulative: FIELD}` or `{bitfield: FIELD, anchor: FIELD}`",
        ),
        (
            "  recognise: {port: 1}\n  ack: all\n",
            15,
            8,
            "`ack` takes `none`, `{cumulative: FIELD}` or `{bitfield: FIELD, anchor: FIELD}`",
        ),
        (
            "  recognise: {port: 1}\n  rates: {one: 5}\n",
            15,
            10,
            "`rates` needs `message-type` with an enum: rates are per message type",
        ),
        (
            "  recognise: {port: 1}\n  message-type: a\n  rates: {two: 5}\n",
            16,
            11,
            "`two` is not a value of enum `k`",
        ),
        (
            "  recognise: {port: 1}\n  message-type: a\n  rates: {one: 0}\n",
            16,
            16,
            "a rate is a positive number of Hz",
        ),
        (
            "  recognise: {port: 1}\n  trailing: keep\n",
            15,
            13,
            "`trailing: keep`: use `malformed` or `allow`",
        ),
    ];
    let mut bad = Vec::new();
    for (keys, line, col, says) in cases {
        let text = format!("{head}{keys}");
        let e = err(&text);
        if (e.line, e.col, e.msg.as_str()) != (line, col, says) {
            bad.push(format!("{keys:?}: {}:{}: {}", e.line, e.col, e.msg));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A field's and `meta`'s refused forms, each with its line, column and a
/// part of the message.
#[test]
fn refused_fields_say_where_and_what() {
    let enums = "enums:\n  k:\n    1: one\n";
    let cases: Vec<(String, usize, usize, &str)> = vec![
        (
            format!("meta:\n  id: t\n  endian: mid\nseq:\n  - id: a\n    type: u1\n{TAIL}"),
            3,
            11,
            "`endian: mid` is not supported: use `be` or `le`",
        ),
        (
            format!("meta:\n  endian: be\nseq:\n  - id: a\n    type: u1\n{TAIL}"),
            2,
            9,
            "`meta` has no `id`: it names the protocol (`vessel`)",
        ),
        (
            format!("{HEAD}seq:\n  - id: a\n    type: u1\nenums:\n  k:\n    1: {{doc: x}}\n{TAIL}"),
            9,
            8,
            "an enum value given as a mapping needs `id`",
        ),
        (
            with_seq("  - id: a\n    type:\n      cases: {}\n"),
            7,
            12,
            "a switch needs `switch-on`",
        ),
        (
            with_seq(
                "  - id: s\n    size: 1\n  - id: b\n    type:\n      switch-on: s\n      cases: {}\n",
            ),
            9,
            18,
            "`switch-on` must name an integer field",
        ),
        (
            with_seq("  - id: a\n    type: u1\n  - id: b\n    type:\n      switch-on: a\n"),
            9,
            16,
            "a switch needs `cases`",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    repeat-expr: 2\n"),
            7,
            18,
            "`repeat-expr` without `repeat: expr`",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    repeat: expr\n"),
            7,
            13,
            "`repeat: expr` needs `repeat-expr`",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    repeat: forever\n"),
            7,
            13,
            "`repeat: forever`: use `eos` or `expr`",
        ),
        (
            with_seq("  - id: a\n    type: str\n    size: 2\n    encoding: UTF-16\n"),
            8,
            15,
            "encoding `UTF-16` is not supported: use UTF-8 or ASCII",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    size: 2\n"),
            5,
            5,
            "`a`: `size` on a number: drop `size`, the type says it",
        ),
        (
            format!(
                "{HEAD}seq:\n  - id: a\n    type: str\n    size: 2\n    enum: k\n{enums}{TAIL}"
            ),
            5,
            5,
            "`a`: `enum` needs an integer type",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    enum: nope\n"),
            7,
            11,
            "unknown enum `nope` (declare it in `enums`)",
        ),
        (
            with_seq("  - id: a\n    contents: []\n"),
            6,
            15,
            "`contents` is empty",
        ),
        (
            with_seq("  - id: a\n    type: u1\n    contents: [1]\n"),
            7,
            15,
            "`contents` with `type`: a magic has no type, drop `type`",
        ),
        (
            with_seq("  - id: a\n    repeat: eos\n"),
            5,
            5,
            "field `a` has neither `type` nor `size`",
        ),
        (
            with_seq("  - id: a\n    size-eos: false\n"),
            6,
            15,
            "`size-eos` takes `true`",
        ),
        (
            with_seq("  - id: a\n    size: 1\n    size-eos: true\n"),
            7,
            15,
            "`size` and `size-eos` together: keep one",
        ),
        (
            with_seq("  - id: a\n    type: str\n    size: 2\n    valid: 1\n"),
            5,
            5,
            "`a`: `valid` applies to numbers only (use `contents` for a magic)",
        ),
    ];
    let mut bad = Vec::new();
    for (text, line, col, says) in cases {
        let e = err(&text);
        if (e.line, e.col) != (line, col) || !e.msg.contains(says) {
            bad.push(format!("{says:?}: {}:{}: {}", e.line, e.col, e.msg));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
