//! A short fuzz pass on every change: the cargo-fuzz targets' entry points
//! (`lwarscope::fuzzing`) on inputs made from the corpus in `captures/` (as
//! `fuzz/seed.py` seeds the fuzzers) and mutated by proptest: bytes changed,
//! inserted, removed, the input cut. Each runs a few seconds; the long runs
//! are cargo-fuzz's (`fuzz/README.md`). Every crash the fuzzers found is a
//! regression test below (`found_by_the_fuzzers`).

use lwarscope::capture::synth::{PcapWriter, udp_fragments};
use lwarscope::capture::{FrameClass, LinkType, Source, Timestamp};
use lwarscope::fuzzing;
use proptest::prelude::*;
use proptest::sample::Index;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

const CAPTURES: [&str; 8] = [
    "sim-clean.pcap",
    "sim-ipv6.pcap",
    "real-server-clean.pcap",
    "strs-clean.pcap",
    "bg-clean.pcap",
    "bg-bigmsg.pcap",
    "ksy-vessel-faults.pcap",
    "ksy-timewarp-faults.pcap",
];

/// The first `n` frames of a capture: link type, timestamp, bytes.
fn frames_of(name: &str, n: usize) -> (LinkType, Vec<(Timestamp, Vec<u8>)>) {
    let mut source = Source::files(&[capture(name)]).expect("capture opens");
    let mut out = Vec::new();
    let mut link = LinkType::Ethernet;
    while let Some(f) = source.next_frame().expect("capture reads") {
        link = f.link;
        out.push((f.ts, f.data.to_vec()));
        if out.len() == n {
            break;
        }
    }
    (link, out)
}

fn link_selector(link: LinkType) -> u8 {
    match link {
        LinkType::Ethernet => 0,
        LinkType::LinuxSll => 1,
        LinkType::LinuxSll2 => 2,
        LinkType::Null => 3,
        LinkType::Loop => 4,
        LinkType::RawIp => 5,
    }
}

fn record(link: u8, flags: u8, frame: &[u8]) -> Vec<u8> {
    let mut r = vec![link, flags];
    r.extend_from_slice(&(frame.len() as u16).to_le_bytes());
    r.extend_from_slice(frame);
    r
}

/// Inputs of the `frames` target: runs of the corpus' frames, whole and cut,
/// and fragments (in order, reversed, overlapping, timed out).
fn frame_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        for name in CAPTURES {
            let (link, frames) = frames_of(name, 24);
            let sel = link_selector(link);
            for run in frames.chunks(6) {
                seeds.push(run.iter().flat_map(|(_, f)| record(sel, 0, f)).collect());
                seeds.push(
                    run.iter()
                        .flat_map(|(_, f)| record(sel, 1, &f[..f.len().min(60)]))
                        .collect(),
                );
            }
        }
        let v4 = (
            "10.0.0.1:5000".parse().unwrap(),
            "10.0.0.2:32422".parse().unwrap(),
        );
        let v6 = (
            "[::1]:5000".parse().unwrap(),
            "[::2]:32422".parse().unwrap(),
        );
        let payload: Vec<u8> = (0..200u8).collect();
        for (src, dst) in [v4, v6] {
            let frags = udp_fragments(src, dst, 9, &payload, 64);
            let raw = |f: &Vec<u8>| record(5, 0, f);
            seeds.push(frags.iter().flat_map(raw).collect());
            seeds.push(frags.iter().rev().flat_map(raw).collect());
            let other = udp_fragments(src, dst, 9, &payload, 48);
            seeds.push(
                [
                    raw(&frags[0]),
                    raw(&other[1]),
                    raw(&frags[1]),
                    raw(&frags[2]),
                ]
                .concat(),
            );
            let mut late = frags.iter().map(raw).collect::<Vec<_>>();
            if let Some(last) = late.last_mut() {
                last[1] = 2;
            }
            seeds.push(late.concat());
        }
        seeds
    })
}

/// A pcapng block (little-endian).
fn ng_block(kind: u32, body: &[u8]) -> Vec<u8> {
    let len = (12 + body.len().div_ceil(4) * 4) as u32;
    let mut b = kind.to_le_bytes().to_vec();
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(body);
    b.resize(len as usize - 4, 0);
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// Ethernet frames as a pcapng file with an Ethernet and a raw IP interface:
/// every other frame without its Ethernet header, on the second.
fn mixed_pcapng(frames: &[(Timestamp, Vec<u8>)]) -> Vec<u8> {
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut out = ng_block(0x0a0d_0d0a, &shb);
    for link in [1u16, 101] {
        let mut idb = link.to_le_bytes().to_vec();
        idb.extend_from_slice(&[0; 6]);
        out.extend(ng_block(1, &idb));
    }
    for (i, (ts, f)) in frames.iter().enumerate() {
        let (iface, data) = if i % 2 == 0 {
            (0u32, &f[..])
        } else {
            (1, &f[14..])
        };
        let us = ts.0 / 1000;
        let mut epb = iface.to_le_bytes().to_vec();
        epb.extend_from_slice(&((us >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(us as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(data);
        out.extend(ng_block(6, &epb));
    }
    out
}

/// Inputs of the `capture_file` target: each capture's first frames as pcap;
/// those of Ethernet captures also as a pcapng file mixing link types, plain
/// and gzip-compressed (read as a stream).
fn file_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seed.pcap");
        let mut seeds = Vec::new();
        for name in CAPTURES {
            let (link, frames) = frames_of(name, 12);
            let mut w = PcapWriter::create(&path, link).unwrap();
            for (ts, f) in &frames {
                w.write(*ts, f);
            }
            w.finish().unwrap();
            seeds.push(std::fs::read(&path).unwrap());
            if link == LinkType::Ethernet {
                let mixed = mixed_pcapng(&frames);
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                std::io::Write::write_all(&mut gz, &mixed).unwrap();
                seeds.push(gz.finish().unwrap());
                seeds.push(mixed);
            }
        }
        seeds
    })
}

/// Inputs of the `display_filter` target: expressions, some with payloads.
fn filter_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let exprs = [
            "type == Join && seqno > 1",
            "Join || Leave && c2s",
            "!(resend || lost) and frame >= 3",
            "reordered || violation || malformed",
            "strs.input.move_x > 0.5",
            "strs.type == 0x0300",
            "time >= 0.003 && len < 100",
            "ip.src == 127.0.0.1 || ip.addr == ::1",
            "truncated || duplicate-packet",
            "lwar.seqno == 2",
        ];
        let (_, frames) = frames_of("sim-clean.pcap", 4);
        let tail: Vec<u8> = frames
            .iter()
            .flat_map(|(_, f)| {
                let p = &f[42.min(f.len())..];
                let p = &p[..p.len().min(255)];
                [&[p.len() as u8][..], p].concat()
            })
            .collect();
        exprs
            .iter()
            .flat_map(|e| [e.as_bytes().to_vec(), [e.as_bytes(), b"\0", &tail].concat()])
            .collect()
    })
}

/// Inputs of the `rules_file` target: rules files and expected results.
fn rules_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds: Vec<Vec<u8>> = [
            "deny = [\"malformed\", \"violation\"]\nallow = [\"after-disconnect\"]\n[max]\nresend-rate = \"5%\"\n",
            "[max]\nack-delay-p95 = 250\njitter = \"30ms\"\nunacked = 3\nloss = 0.02\nsessions = 10\n",
            "[min]\npackets = 10\n[max]\ntimed-out = 0\n\"lwar.violation.after-disconnect\" = 0\n",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        for name in ["sim-clean.truth.json", "strs-clean.truth.json"] {
            let path = capture(name);
            seeds.push(std::fs::read(path).unwrap());
        }
        seeds
    })
}

/// The first `n` UDP payloads of a capture.
fn payloads_of(name: &str, n: usize) -> Vec<Vec<u8>> {
    let mut source = Source::files(&[capture(name)]).expect("capture opens");
    let mut out = Vec::new();
    while let Some(f) = source.next_frame().expect("capture reads") {
        if let FrameClass::Udp(d) = f.class {
            out.push(d.payload.to_vec());
        }
        if out.len() == n {
            break;
        }
    }
    out
}

/// Descriptions, each with packets: the shipped ones with payloads of their
/// captures, and small ones (a sequence with acks, a `valid`, a switch, a
/// repeat) with packets made for them.
fn description_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let with = |ksy: &str, packets: &[Vec<u8>]| {
            let mut s = ksy.as_bytes().to_vec();
            s.push(0);
            for p in packets {
                let p = &p[..p.len().min(255)];
                s.push(p.len() as u8);
                s.extend_from_slice(p);
            }
            s
        };
        let shipped = |name: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocols").join(name);
            std::fs::read_to_string(path).unwrap()
        };
        let mut seeds = vec![
            with(&shipped("vessel.ksy"), &payloads_of("ksy-vessel-faults.pcap", 12)),
            with(&shipped("timewarp.ksy"), &payloads_of("ksy-timewarp-faults.pcap", 12)),
            with(&shipped("starstrike.ksy"), &payloads_of("strs-clean.pcap", 12)),
        ];
        let small = "meta:\n  id: small\n  endian: le\nseq:\n  - id: kind\n    type: u1\n    enum: kind\n  - id: seq\n    type: u1\n  - id: ack\n    type: u1\n  - id: n\n    type: u1\n    valid:\n      max: 4\n  - id: body\n    type:\n      switch-on: kind\n      cases:\n        kind::one: one\n        _: two\n    repeat: expr\n    repeat-expr: n\ntypes:\n  one:\n    seq:\n      - id: x\n        type: u2\n  two:\n    seq:\n      - id: len\n        type: u1\n      - id: s\n        type: str\n        size: len\n        encoding: UTF-8\nenums:\n  kind:\n    1: one\n    2: two\n-lwarscope:\n  recognise:\n    port: 9000\n  message-type: kind\n  sequence:\n    field: seq\n  ack:\n    cumulative: ack\n  timeout: 1s\n";
        let packets: Vec<Vec<u8>> = (0u8..12)
            .map(|i| match i % 3 {
                0 => vec![1, i, i, 2, 1, 0, 2, 0],
                1 => vec![2, i, i, 1, 2, b'h', b'i'],
                _ => vec![3, i, i, 9],
            })
            .collect();
        seeds.push(with(small, &packets));
        // A protobuf description and its .proto, with Vessel's packets (sent
        // alternately each way: a message read as the other side's is
        // malformed or has unknown fields).
        let mut pb = shipped("vessel-protobuf.yaml").into_bytes();
        pb.push(0);
        pb.extend(shipped("vessel.proto").into_bytes());
        pb.push(0);
        seeds.push(with(
            std::str::from_utf8(&pb).unwrap(),
            &payloads_of("vessel-faults.pcap", 40),
        ));
        seeds
    })
}

/// A seed, mutated: bytes set, inserted or removed, or the input cut.
fn mutated(seeds: &'static [Vec<u8>]) -> impl Strategy<Value = Vec<u8>> {
    (
        any::<Index>(),
        proptest::collection::vec((any::<Index>(), any::<u8>(), 0u8..5), 0..6),
    )
        .prop_map(move |(seed, edits)| {
            let mut d = seed.get(seeds).clone();
            for (at, byte, op) in edits {
                let len = d.len();
                match op {
                    0 | 1 if len > 0 => d[at.index(len)] = byte,
                    2 => d.insert(at.index(len + 1), byte),
                    3 if len > 0 => {
                        d.remove(at.index(len));
                    }
                    4 => d.truncate(at.index(len + 1)),
                    _ => {}
                }
            }
            d
        })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(1500))]
    #[test]
    fn frames(data in mutated(frame_seeds())) {
        fuzzing::frames(&data);
    }
}

proptest! {
    #![proptest_config(config(300))]
    #[test]
    fn capture_files(data in mutated(file_seeds())) {
        fuzzing::capture_file(&data);
    }
}

proptest! {
    #![proptest_config(config(400))]
    #[test]
    fn display_filters(data in mutated(filter_seeds())) {
        fuzzing::display_filter(&data);
    }
}

proptest! {
    #![proptest_config(config(400))]
    #[test]
    fn rules_files(data in mutated(rules_seeds())) {
        fuzzing::rules_file(&data);
        fuzzing::description(&data);
    }
}

proptest! {
    #![proptest_config(config(300))]
    #[test]
    fn descriptions(data in mutated(description_seeds())) {
        fuzzing::description(&data);
    }
}

proptest! {
    #![proptest_config(config(200))]
    #[test]
    fn protobuf_descriptions(data in mutated(&description_seeds()[4..])) {
        fuzzing::description(&data);
    }
}

// Arbitrary bytes too, not only mutated seeds.
proptest! {
    #![proptest_config(config(300))]
    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::frames(&data);
        fuzzing::capture_file(&data);
        fuzzing::display_filter(&data);
        fuzzing::rules_file(&data);
    }
}

/// The seeds themselves: each target handles its whole corpus, and the
/// sample sessions the filter and rules targets use are there.
#[test]
fn every_seed_passes() {
    for s in frame_seeds() {
        fuzzing::frames(s);
    }
    for s in file_seeds() {
        fuzzing::capture_file(s);
    }
    for s in filter_seeds() {
        fuzzing::display_filter(s);
    }
    for s in rules_seeds() {
        fuzzing::rules_file(s);
    }
    for s in description_seeds() {
        fuzzing::description(s);
        // Each seed's description compiles: its packets reach the decoder.
        let text = std::str::from_utf8(s.split(|b| *b == 0).next().unwrap()).unwrap();
        if lwarscope::proto::described::protobuf::is_protobuf(text) {
            let proto = std::str::from_utf8(s.split(|b| *b == 0).nth(1).unwrap()).unwrap();
            let proto = proto.to_owned();
            let resolve = move |_: &str| Some(Ok(proto.clone()));
            lwarscope::proto::described::protobuf::parse("seed.yaml", text, Box::new(resolve))
                .unwrap();
            continue;
        }
        lwarscope::proto::described::parse("seed.ksy", text).unwrap();
    }
    // The mixed-link pcapng seeds, plain and compressed, read whole.
    let dir = tempfile::tempdir().unwrap();
    let mut mixed = 0;
    for (i, s) in file_seeds().iter().enumerate() {
        let ng = s.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]);
        if !(ng || s.starts_with(&[0x1f, 0x8b])) {
            continue;
        }
        let path = dir.path().join(format!("seed-{i}"));
        std::fs::write(&path, s).unwrap();
        let mut source = Source::files(&[&path]).expect("seed opens");
        let mut udp = 0;
        while let Some(f) = source.next_frame().expect("seed reads") {
            udp += u32::from(matches!(f.class, FrameClass::Udp(_)));
        }
        assert_eq!(udp, 12, "seed {i}");
        mixed += 1;
    }
    assert!(mixed >= 4, "{mixed}");
    // The frames seeds reach UDP, and the capture seeds the protocols.
    let mut framer = lwarscope::capture::Framer::new(Default::default());
    let (link, frames) = frames_of("sim-clean.pcap", 1);
    let class = framer.frame(link, &frames[0].1, false, 1, frames[0].0);
    assert!(matches!(class, FrameClass::Udp(_)));
}

/// Inputs the fuzz pass itself found, kept in `tests/fuzz-found/`: each ran
/// into a panic once (in a debug build, where overflow checks are on).
#[test]
fn found_by_the_fuzz_pass() {
    // A resend cycle summed over timestamps centuries apart overflowed the
    // report's sum of resend intervals.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-found");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/fuzz-found") {
        let path = entry.unwrap().path();
        fuzzing::capture_file(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 1, "no input in {}", dir.display());
}
