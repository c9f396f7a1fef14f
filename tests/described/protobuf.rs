//! Protocols described by a `.proto` (`-X proto:FILE` with a protobuf
//! description, `docs/protobuf.md`): the example `protocols/vessel-protobuf.yaml`
//! loads, its fields are registered by path for `-T fields`, `-Y`, `-V` and
//! JSON, the Google-encoded Vessel fixture decodes field for field, the
//! analysis finds what native `vessel` finds on the Vessel captures as far as
//! the keys can express it, the hot path allocates nothing, and a broken
//! `.proto` or description is one line with file:line:column and exit 2.

use crate::common;
use crate::counting_alloc;
use crate::vessel_common;

use common::lwarscope;
use counting_alloc::allocations;
use lwarscope::capture::{Datagram, FrameClass, Source};
use lwarscope::engine::{Finding, Observer, RecognisedBy};
use lwarscope::proto::described::{self, Described, decode::Events, decode::Side};
use lwarscope::proto::field::{Field, FieldSink};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

const DESCRIPTION: &str = "protocols/vessel-protobuf.yaml";

fn root(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// `lwarscope -X proto:protocols/vessel-protobuf.yaml -d udp.port==39461,vessel_pb`.
fn with_description() -> assert_cmd::Command {
    let mut c = lwarscope();
    c.current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "-X",
        &format!("proto:{DESCRIPTION}"),
        "-d",
        "udp.port==39461,vessel_pb",
    ]);
    c
}

fn stdout(c: &mut assert_cmd::Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The example description, compiled and made `&'static` (not in the
/// registry: this binary's other tests use the built-in one).
fn vessel_pb() -> &'static Described {
    let text = std::fs::read_to_string(root(DESCRIPTION)).unwrap();
    let d = described::parse(&root(DESCRIPTION).display().to_string(), &text).unwrap();
    outside_the_registry(d)
}

/// Leaks a description numbered past every description of the registry, so
/// that its findings' details never borrow a registered protocol's field
/// names, whatever this test binary's other tests loaded first (index 0 would
/// name the first shipped description's fields).
fn outside_the_registry(d: Described) -> &'static Described {
    described::leak(d, described::loaded().len())
}

#[test]
fn the_example_loads_and_registers_its_fields_by_path() {
    let text = stdout(with_description().arg("--list-fields"));
    for name in [
        "vessel_pb.message",
        "vessel_pb.syncNumber",
        "vessel_pb.joinStatus",
        "vessel_pb.shipInput.throttleLeftEngine",
        "vessel_pb.shipSensors.visual.visibleObjects.position.x",
        "vessel_pb.shipSensors.health.health",
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} missing"
        );
    }
    assert!(
        text.contains(
            "uint32 syncNumber: field 3 in vesselToEnvironment, 4 in environmentToVessel"
        )
    );
}

#[test]
fn fields_by_path_in_t_fields_y_and_json() {
    let text = stdout(with_description().args([
        "-r",
        "captures/vessel-clean.pcap",
        "-c",
        "4",
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "vessel_pb.message",
        "-e",
        "vessel_pb.syncNumber",
        "-e",
        "vessel_pb.vesselID",
        "-e",
        "vessel_pb.shipInput.throttleLeftEngine",
        "-e",
        "vessel_pb.shipSensors.health.health",
    ]));
    assert_eq!(
        text,
        "1\tvesselToEnvironment\t103\t\t0.25\t\n\
         2\tenvironmentToVessel\t181\tvessel-0\t0.5\t100\n\
         3\tvesselToEnvironment\t104\tvessel-0\t0.375\t\n\
         4\tenvironmentToVessel\t182\t\t0.5\t100\n"
    );
    // The same packets as native `vessel` selects by the same path.
    let select = |proto: &str| {
        let filter = format!("{proto}.shipSensors.visual.visibleObjects.type == 1");
        let mut c = if proto == "vessel" {
            let mut c = lwarscope();
            c.current_dir(env!("CARGO_MANIFEST_DIR"));
            c
        } else {
            with_description()
        };
        let text = stdout(c.args([
            "-r",
            "captures/vessel-clean.pcap",
            "-Y",
            &filter,
            "-T",
            "fields",
            "-e",
            "frame.number",
        ]));
        text.lines().map(str::to_owned).collect::<Vec<_>>()
    };
    let ours = select("vessel_pb");
    assert_eq!(ours.len(), 887);
    assert_eq!(&ours[..3], ["6", "10", "19"]);
    assert_eq!(ours, select("vessel"));
    // JSON: the typed fields by path; -V: the tree.
    let text = stdout(with_description().args([
        "-r",
        "captures/vessel-clean.pcap",
        "-c",
        "1",
        "--format",
        "jsonl",
        "-V",
    ]));
    let packet: Json = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let m = &packet["messages"][0];
    assert_eq!(m["type"], "vesselToEnvironment");
    assert_eq!(
        m["text"],
        "protocolVersion=\"0.0.2\" syncNumber=103 throttleLeftEngine=0.25 throttleRightEngine=0.5 fireGun=true"
    );
    let fields = m["fields"].as_array().unwrap();
    assert!(fields.contains(&serde_json::json!(
        {"field": "vessel_pb.shipInput.throttleLeftEngine", "value": 0.25}
    )));
    let tree =
        stdout(with_description().args(["-r", "captures/vessel-clean.pcap", "-c", "1", "-V"]));
    assert!(
        tree.contains("      shipInput (14 bytes at offset 9)\n        throttleLeftEngine: 0.25\n"),
        "{tree}"
    );
}

#[test]
fn malformed_packets_name_the_field_and_the_byte() {
    let text = stdout(with_description().args([
        "-r",
        "captures/vessel-faults.pcap",
        "-c",
        "130",
        "-Y",
        "malformed",
    ]));
    assert_eq!(
        text,
        "   100    0.388337 10.7.0.100:39461 -> 10.7.0.5:41004 seq=69 len=115 [malformed: past-end: `vessel_pb.shipSensors` at offset 24 is truncated: it needs 92 bytes, 90 are left in its message]\n   \
         120    0.450005 10.7.0.5:41004 -> 10.7.0.100:39461 seq=71 len=31 [malformed: past-end: `vessel_pb.shipInput` at offset 20 is truncated: it needs 12 bytes, 10 are left in its message]\n"
    );
}

/// Per session and direction: packets, malformed, duplicates, reorders and
/// the loss estimate, from the JSON summary.
fn figures(summary: &Json) -> Vec<(String, String, Json)> {
    let mut out = Vec::new();
    for s in summary["sessions"].as_array().unwrap() {
        for dir in ["c2s", "s2c"] {
            let d = &s[dir];
            let malformed: u64 = d["malformed"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            out.push((
                s["client"].as_str().unwrap().to_owned(),
                dir.to_owned(),
                serde_json::json!({
                    "packets": d["packets"],
                    "malformed": malformed,
                    "duplicates": d["findings"].get("duplicate-packet").cloned().unwrap_or(Json::from(0)),
                    "reordered": d["reordered"],
                    "loss": d["loss"],
                }),
            ));
        }
    }
    out
}

#[test]
fn the_description_finds_what_native_vessel_finds_as_far_as_its_keys_go() {
    for capture in ["vessel-clean", "vessel-faults", "vessel-tapmiss"] {
        let path = format!("captures/{capture}.pcap");
        let json = |c: &mut assert_cmd::Command| -> Json {
            let text = stdout(c.args(["-r", &path, "--format", "json"]));
            serde_json::from_str::<Json>(&text).unwrap()["summary"].clone()
        };
        let mut native = lwarscope();
        native.current_dir(env!("CARGO_MANIFEST_DIR"));
        let native = figures(&json(&mut native));
        let ours = figures(&json(&mut with_description()));
        assert_eq!(native.len(), ours.len(), "{capture}");
        for (n, o) in native.iter().zip(&ours) {
            assert_eq!((&n.0, &n.1), (&o.0, &o.1), "{capture}");
            // The version-mismatch session's environment sends two
            // version-only replies (protocolVersion alone, the same bytes):
            // native Vessel's rule 3 takes them out of the sequence and of
            // the duplicate check; no key expresses it, so the description
            // reads their absent syncNumber as 0 (one expected number) and
            // the second as the first's duplicate.
            if n.0 == "10.7.0.2:41001" && n.1 == "s2c" {
                assert_eq!(n.2["loss"], serde_json::json!({"expected": 0, "lost": 0}));
                assert_eq!(o.2["loss"], serde_json::json!({"expected": 1, "lost": 0}));
                assert_eq!(
                    (&n.2["duplicates"], &o.2["duplicates"]),
                    (&Json::from(0), &Json::from(1))
                );
                assert_eq!(n.2["packets"], o.2["packets"]);
                continue;
            }
            assert_eq!(n.2, o.2, "{capture}: {} {}", n.0, n.1);
        }
    }
}

/// The fields on the wire, as the fixture's truth writes them (`vessel.`
/// paths): `[path, value]`, a message `[path, null]`.
#[derive(Default)]
struct OnWire(Vec<(String, Json)>);

impl Events for OnWire {
    fn field(&mut self, f: Field<'_>) {
        if f.len == 0 {
            return; // absent (its default), or `vessel_pb.message`
        }
        let j = vessel_common::google_json(f.def.name, f.value);
        let name = f.def.name.replacen("vessel_pb.", "vessel.", 1);
        self.0.push((name, j));
    }
    fn enter(&mut self, node: Field<'_>) {
        if node.def.name != "vessel_pb" {
            let name = node.def.name.replacen("vessel_pb.", "vessel.", 1);
            self.0.push((name, Json::Null));
        }
    }
}

#[test]
fn the_google_encoded_fixture_decodes_field_for_field() {
    let d = vessel_pb();
    vessel_common::check_google_fixture(|dg| {
        let side = if dg.dst.port() == 39461 {
            Side::Client
        } else {
            Side::Server
        };
        let mut got = OnWire::default();
        d.compiled
            .walk_as(dg.payload, side, &mut got)
            .map_err(|e| format!("{e:?}"))?;
        Ok(got.0)
    });
}

#[derive(Default)]
struct Tally(u64);

impl Observer for Tally {
    fn finding(&mut self, _: &Finding) {
        self.0 += 1;
    }
}

struct Count(u64);
impl FieldSink for Count {
    fn field(&mut self, _: Field<'_>) {
        self.0 += 1;
    }
}

#[test]
fn the_hot_path_allocates_nothing() {
    let d = vessel_pb();
    // Every datagram of the faults capture (lost, reordered, duplicated and
    // malformed packets, so findings are raised), twice: the first pass
    // warms up, the second is counted.
    let mut frames: Vec<(u64, Datagram<'static>)> = Vec::new();
    let mut source = Source::files(&[root("captures/vessel-faults.pcap")]).unwrap();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(dg) = frame.class {
            let payload: &'static [u8] = Box::leak(dg.payload.to_vec().into_boxed_slice());
            frames.push((
                dg.frame,
                Datagram {
                    payload,
                    digest: None,
                    probes: None,
                    ..dg
                },
            ));
        }
    }
    // And a datagram of each way a protobuf message is malformed (prost's
    // own errors are boxed: the walk never makes one), from the first
    // vessel.
    let first = Datagram {
        ts: frames[frames.len() - 1].1.ts,
        ..frames[0].1
    };
    let malformed: [&'static [u8]; 7] = [
        &[0x18, 0x96], // syncNumber's varint cut short
        &[
            0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ], // 11 bytes
        &[0x0f],       // wire type 7
        &[0x7b, 0x08, 0x01], // an unknown group that does not end
        &[0x7b, 0x83, 0x01], // ended by another field's end
        &[0x12, 0x01, 0xff], // vesselID not UTF-8
        &[0x1a, 0x05], // syncNumber sent length-delimited
    ];
    for p in malformed {
        let frame = frames.len() as u64 + 1;
        frames.push((
            frame,
            Datagram {
                payload: p,
                payload_len: p.len(),
                ..first
            },
        ));
    }
    // An unknown group, nested, skipped whole.
    let skipped: &'static [u8] = &[0x7b, 0x83, 0x01, 0x08, 0x01, 0x84, 0x01, 0x7c, 0x18, 0x05];
    let mut s = OnWire::default();
    assert_eq!(
        d.compiled.walk_as(skipped, Side::Client, &mut s),
        Ok(skipped.len())
    );
    assert_eq!(s.0, [("vessel.syncNumber".to_owned(), Json::from(5))]);
    let mut tracker = described::tracker(d, Default::default());
    let dissector = d.info().dissector;
    let client = d.side_dissector(Side::Client).unwrap();
    let server = d.side_dissector(Side::Server).unwrap();
    let mut tally = Tally::default();
    let mut fields = Count(0);
    let mut line = Vec::with_capacity(4096);
    let mut next_id = 0;
    let mut before = 0;
    for pass in 0..2 {
        if pass == 1 {
            before = allocations();
        }
        for (i, (_, dg)) in frames.iter().enumerate() {
            let mut dg = *dg;
            // The second pass, a second later, continues the sessions.
            dg.ts = lwarscope::capture::Timestamp(dg.ts.0 + pass * 20_000_000_000);
            dg.frame = (pass as usize * frames.len() + i) as u64 + 1;
            tracker.observe(&dg, &mut tally, &mut next_id, RecognisedBy::Probe);
            let _ = dissector.fields(dg.payload, &mut fields);
            let _ = client.fields(dg.payload, &mut fields);
            let _ = server.fields(dg.payload, &mut fields);
            // What the packet lines, -V and JSON write: the header, the
            // message's token and text (into a line reused), the tree.
            for dis in [dissector, client, server] {
                let _ = dis.header(dg.payload, &mut |_| {});
                let _ = dis.messages(dg.payload, &mut |m| {
                    line.clear();
                    m.token.write_bytes(&mut line);
                    m.text.write_bytes(&mut line);
                });
                dis.tree_ref(dg.payload, &mut |_| fields.0 += 1);
            }
        }
    }
    let during = allocations() - before;
    assert!(tally.0 > 100, "{} findings", tally.0);
    assert!(fields.0 > 10_000, "{} fields", fields.0);
    assert_eq!(
        during,
        0,
        "{during} allocations over {} packets",
        frames.len()
    );
}

#[test]
fn a_broken_proto_or_description_is_one_line_with_its_place_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("lwarscope-pb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("broken.proto"),
        "syntax = \"proto3\";\nmessage A {\n  uint32 seq = 1\n  string name = 2;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("good.proto"),
        "syntax = \"proto3\";\nmessage A {\n  uint32 seq = 1;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.yaml"),
        "meta: {id: a_pb}\nprotobuf: {file: broken.proto, message: A}\n-lwarscope: {recognise: {port: 9000}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.yaml"),
        "meta: {id: b_pb}\nprotobuf: {file: good.proto, message: A}\n-lwarscope:\n  recognise: {port: 9000}\n  sequence: {field: sq}\n",
    )
    .unwrap();
    for (file, says) in [
        (
            "a.yaml",
            format!(
                "error: {}:4:3: expected ';' or '[', but found 'string'\n",
                dir.join("broken.proto").display()
            ),
        ),
        (
            "b.yaml",
            format!(
                "error: {}:5:21: `sequence.field`: `sq` is not an integer, bool or enum field of `A` (by its path: `header.seq`), not repeated\n",
                dir.join("b.yaml").display()
            ),
        ),
    ] {
        let out = lwarscope()
            .arg(format!("-Xproto:{}", dir.join(file).display()))
            .arg("--list-fields")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), says);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The code block of `lang` after `heading` in docs/protobuf.md.
fn doc_block(heading: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root("docs/protobuf.md")).unwrap();
    let after = &doc[doc.find(heading).unwrap()..];
    let start = after.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
    let end = after[start..].find("```").unwrap();
    after[start..start + end].to_owned()
}

#[derive(Default)]
struct Names(Vec<String>);

impl Observer for Names {
    fn finding(&mut self, f: &Finding) {
        self.0.push(format!("{} {}", f.label(), f.detail));
    }
}

#[test]
fn the_guides_own_example_loads_and_finds_what_its_packets_hold() {
    let proto = doc_block("## Your own protocol", "proto");
    let yaml = doc_block("## Your own protocol", "yaml");
    let d = described::protobuf::parse(
        "mygame.yaml",
        &yaml,
        Box::new(move |name: &str| (name == "mygame.proto").then(|| Ok(proto.clone()))),
    )
    .unwrap();
    let d = outside_the_registry(d);
    let names: Vec<&str> = d.compiled.defs.iter().map(|f| f.name).collect();
    for name in [
        "mygame.seq",
        "mygame.kind",
        "mygame.input.dx",
        "mygame.snapshot.entities.x",
    ] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
    let client = std::net::SocketAddr::from(([10, 0, 0, 1], 40_000));
    let server = std::net::SocketAddr::from(([10, 0, 0, 2], 27_015));
    let packets: [(bool, &[u8]); 5] = [
        // INPUT seq 1 (dx 1), 2, 4 (dx 101: outside its `valid`); 3 missing.
        (true, &[0x08, 0x01, 0x22, 0x02, 0x08, 0x02]),
        (true, &[0x08, 0x02, 0x22, 0x00]),
        (true, &[0x08, 0x04, 0x22, 0x03, 0x08, 0xca, 0x01]),
        // The server's SNAPSHOT seq 1 acknowledges up to 4 (so 3 was sent).
        (false, &[0x08, 0x01, 0x10, 0x04, 0x18, 0x01, 0x2a, 0x00]),
        // A SNAPSHOT from the client: the wrong direction.
        (true, &[0x08, 0x05, 0x18, 0x01, 0x2a, 0x00]),
    ];
    let mut tracker = described::tracker(d, Default::default());
    let mut seen = Names::default();
    let mut next = 0;
    for (i, (from_client, p)) in packets.iter().enumerate() {
        let (src, dst) = if *from_client {
            (client, server)
        } else {
            (server, client)
        };
        let dg = Datagram::new(
            i as u64 + 1,
            lwarscope::capture::Timestamp::from_millis(1_000 + 10 * i as u64),
            src,
            dst,
            p,
        );
        tracker.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
    }
    tracker.finish(&mut seen);
    // (Outside the registry, the details name fields `?`.)
    assert_eq!(
        seen.0,
        [
            "violation/valid `?` = 101 at offset 4",
            "violation/wrong-direction `?` (1) from the client: only the server sends it",
            "not-captured ",
        ]
    );
}

#[test]
fn a_description_may_not_take_the_built_in_vessels_name() {
    let dir = std::env::temp_dir().join(format!("lwarscope-pbname-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = std::fs::read_to_string(root(DESCRIPTION))
        .unwrap()
        .replace("id: vessel_pb", "id: vessel");
    std::fs::write(dir.join("v.yaml"), yaml).unwrap();
    std::fs::copy(root("protocols/vessel.proto"), dir.join("vessel.proto")).unwrap();
    let out = lwarscope()
        .arg(format!("-Xproto:{}", dir.join("v.yaml").display()))
        .arg("--list-fields")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: {}: protocol `vessel` is a built-in protocol's name: choose another `meta.id`\n",
            dir.join("v.yaml").display()
        )
    );
}

/// The walk accepts exactly what prost's decoder of the same messages
/// accepts (Vessel's, derived from the same `.proto`): every one-byte change
/// of real packets of both directions, and every cut.
#[test]
fn the_walk_and_prost_accept_exactly_the_same_datagrams() {
    use lwarscope::proto::vessel::wire::{EnvironmentToVessel, VesselToEnvironment};
    use prost::Message as _;
    let d = vessel_pb();
    let mut source = Source::files(&[root("captures/vessel-clean.pcap")]).unwrap();
    let mut packets = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(dg) = frame.class
            && packets.len() < 40
        {
            packets.push((dg.dst.port() == 39461, dg.payload.to_vec()));
        }
    }
    let mut checked = 0;
    let mut refused = 0;
    for (to_server, p) in &packets {
        let mut variants: Vec<Vec<u8>> = (0..p.len()).map(|n| p[..n].to_vec()).collect();
        for i in 0..p.len() {
            for b in [
                0x00, 0x01, 0x02, 0x05, 0x07, 0x08, 0x0b, 0x0c, 0x7f, 0x80, 0xff,
            ] {
                let mut m = p.clone();
                m[i] = b;
                variants.push(m);
            }
        }
        for m in variants {
            let (side, prost_ok) = if *to_server {
                (Side::Client, VesselToEnvironment::decode(&m[..]).is_ok())
            } else {
                (Side::Server, EnvironmentToVessel::decode(&m[..]).is_ok())
            };
            struct Nothing;
            impl Events for Nothing {}
            let walk_ok = d.compiled.walk_as(&m, side, &mut Nothing).is_ok();
            assert_eq!(prost_ok, walk_ok, "{m:02x?}");
            checked += 1;
            refused += usize::from(!walk_ok);
        }
    }
    assert!(
        checked > 20_000 && refused > 5_000,
        "{checked} checked, {refused} refused"
    );
}

/// A protocol without acks cannot tell a number lost before the tap from
/// one the tap missed: on a capture whose only fault is tap misses, the
/// numbers never captured are `not-captured` notes ("unconfirmed: the
/// protocol has no acks ..."), never `lost` warnings (175 of them before),
/// and the loss estimate still counts them.
#[test]
fn tap_misses_of_a_protocol_without_acks_are_notes_not_loss() {
    let out = lwarscope()
        .args(["-X", "proto:protocols/vessel-protobuf.yaml"])
        .args(["-d", "udp.port==39461,vessel_pb"])
        .args([
            "-r",
            "captures/vessel-tapmiss.pcap",
            "-q",
            "-z",
            "expert,warn",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Expert information (-z expert,warn)\nNo findings.\n\n"
    );
    let out = lwarscope()
        .args(["-X", "proto:protocols/vessel-protobuf.yaml"])
        .args(["-d", "udp.port==39461,vessel_pb"])
        .args(["-r", "captures/vessel-tapmiss.pcap", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let missed: Vec<_> = findings
        .iter()
        .filter(|f| f["kind"] == "not-captured")
        .collect();
    assert!(!missed.is_empty());
    assert!(findings.iter().all(|f| f["kind"] != "lost"));
    for f in missed {
        let detail = f["detail"].as_str().unwrap();
        assert!(
            detail.contains("unconfirmed: the protocol has no acks"),
            "{detail}"
        );
    }
}

/// A sink that shows one field (as `-T fields -e NAME` does): it wants only
/// the groups that may hold it, and records every field it is handed.
struct OnlyOne {
    name: &'static str,
    handed: Vec<&'static str>,
    asked: usize,
}

impl FieldSink for OnlyOne {
    fn field(&mut self, f: Field<'_>) {
        self.handed.push(f.def.name);
    }
    fn wants_any(&mut self, _key: usize, defs: &lwarscope::proto::field::GroupDefs<'_>) -> bool {
        self.asked += 1;
        let mut any = false;
        defs(&mut |d| any |= d.name == self.name);
        any
    }
}

/// Every field, as `-V` or JSON take them.
#[derive(Default)]
struct Every(Vec<&'static str>);

impl FieldSink for Every {
    fn field(&mut self, f: Field<'_>) {
        self.0.push(f.def.name);
    }
}

/// Native Vessel and its protobuf description skip the messages a sink wants
/// no field of (`FieldSink::wants_any`, as lwar, Starstrike, Battlegrounds
/// and `.ksy` protocols do), with the same result: a sink that shows the
/// sync number is handed no field of `shipInput` or `shipSensors`, and the
/// same sync numbers and errors as a sink that takes every field. Before,
/// neither asked.
#[test]
fn vessel_and_its_description_skip_the_messages_a_sink_does_not_want() {
    let native = lwarscope::proto::by_name("vessel").unwrap().info.dissector;
    let described = vessel_pb().info().dissector;
    let mut source = Source::files(&[root("captures/vessel-faults.pcap")]).unwrap();
    let mut packets = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        let FrameClass::Udp(d) = frame.class else {
            continue;
        };
        for (dissector, name) in [
            (native, "vessel.syncNumber"),
            (described, "vessel_pb.syncNumber"),
        ] {
            let mut one = OnlyOne {
                name,
                handed: Vec::new(),
                asked: 0,
            };
            let mut every = Every::default();
            let r1 = dissector.fields(d.payload, &mut one).map(|_| ());
            let r2 = dissector.fields(d.payload, &mut every).map(|_| ());
            assert_eq!(r1.map_err(|e| e.to_string()), r2.map_err(|e| e.to_string()));
            assert!(one.asked > 0, "{name}: never asked");
            assert!(
                !one.handed
                    .iter()
                    .any(|n| n.contains(".shipInput") || n.contains(".shipSensors")),
                "{name}: {:?}",
                one.handed
            );
            let syncs = |names: &[&str]| names.iter().filter(|n| **n == name).count();
            assert_eq!(syncs(&one.handed), syncs(&every.0), "{name}");
        }
        packets += 1;
    }
    assert!(packets > 1000, "{packets}");
}
