//! Issue 30: once a flow is recognised, its later datagrams belong to its
//! protocol (Wireshark binds a conversation to its dissector the same way). A
//! datagram of an established session whose mark (Starstrike's magic, lwar's
//! appId) or header (Battlegrounds') is damaged in place is that session's
//! malformed packet, with the offset of the bad bytes, not other traffic;
//! and Starstrike's damaged packet keeps its sequence number (not lost).
//! Through `proto::engine`, as the binary runs it, without `-d`.

use lwarscope::capture::{FrameClass, OwnedDatagram, Source};
use lwarscope::engine::{Engine, Finding, Observer, TrackerConfig};
use lwarscope::proto;
use std::path::Path;

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// (frame, label, seqno, detail) of every finding, sorted.
type F = (u64, String, Option<u32>, String);

/// Each finding collected as a row: frame, label, seqno, detail.
fn rows(seen: &Collect) -> Vec<F> {
    (seen.0.iter())
        .map(|f| {
            (
                f.frame,
                f.label().to_string(),
                f.seqno,
                f.detail.to_string(),
            )
        })
        .collect()
}

/// Every finding of the datagrams through one engine, and the datagrams no
/// protocol took.
fn analyse(ds: &[OwnedDatagram]) -> (Vec<F>, u64, Engine) {
    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Collect::default();
    for d in ds {
        engine.observe(&d.as_datagram(), &mut seen);
    }
    engine.finish(&mut seen);
    let mut out = rows(&seen);
    out.sort();
    let other = engine.unrecognised().other;
    (out, other, engine)
}

fn read(pcap: &str) -> Vec<OwnedDatagram> {
    let mut source = Source::files(&[Path::new(pcap)]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            out.push(d.to_owned_datagram());
        }
    }
    out
}

/// Damages datagram `i` in place with `damage`; the findings before and
/// after, and the datagrams no protocol took after.
fn damaged(ds: &[OwnedDatagram], i: usize, damage: impl Fn(&mut Vec<u8>)) -> (Vec<F>, Vec<F>, u64) {
    let (clean, other, _) = analyse(ds);
    assert_eq!(other, 0);
    let mut bad = ds.to_vec();
    damage(&mut bad[i].payload);
    let (after, other, _) = analyse(&bad);
    (clean, after, other)
}

/// What `after` has that `before` has not (both sorted), and the reverse.
fn diff(before: &[F], after: &[F]) -> (Vec<F>, Vec<F>) {
    let added = after
        .iter()
        .filter(|f| !before.contains(f))
        .cloned()
        .collect();
    let removed = before
        .iter()
        .filter(|f| !after.contains(f))
        .cloned()
        .collect();
    (added, removed)
}

/// The first PlayerInput from datagram `from` on.
fn input_after(ds: &[OwnedDatagram], from: usize) -> usize {
    (from..ds.len())
        .find(|&i| ds[i].payload.get(4..6) == Some(&[0x01, 0x00][..]))
        .expect("a PlayerInput")
}

#[test]
fn a_starstrike_packet_with_a_damaged_magic_is_its_session_malformed_packet() {
    let ds = read("captures/strs-clean.pcap");
    // A PlayerInput well inside the first session.
    let i = input_after(&ds, 60);
    assert_eq!(&ds[i].payload[..4], b"STRS");
    let (clean, after, other) = damaged(&ds, i, |p| p[0] = b's');
    assert_eq!(other, 0, "not other traffic");
    let (added, removed) = diff(&clean, &after);
    let seq = u16::from_be_bytes([ds[i].payload[6], ds[i].payload[7]]);
    assert_eq!(
        added,
        [(
            ds[i].frame,
            "malformed".to_owned(),
            None,
            "protocolId 0x73545253 at offset 0 is not Starstrike's 0x53545253 (\"STRS\")"
                .to_owned()
        )],
        "seq {seq}"
    );
    // Its number is neither lost nor not captured: nothing else changes.
    assert_eq!(removed, []);
}

#[test]
fn a_starstrike_packet_with_an_unknown_type_keeps_its_number() {
    let ds = read("captures/strs-clean.pcap");
    let i = input_after(&ds, 70);
    let (clean, after, other) = damaged(&ds, i, |p| p[4..6].copy_from_slice(&[0x04, 0x00]));
    assert_eq!(other, 0);
    let (added, removed) = diff(&clean, &after);
    assert_eq!(
        added,
        [(
            ds[i].frame,
            "malformed".to_owned(),
            None,
            "unknown packetType 0x0400 at offset 4".to_owned()
        )]
    );
    assert_eq!(removed, []);
}

#[test]
fn an_lwar_packet_with_a_damaged_app_id_is_its_session_malformed_packet() {
    let ds = read("captures/sim-clean.pcap");
    let i = 100;
    assert!(proto::lwar::wire::is_lwar(&ds[i].payload));
    let (clean, after, other) = damaged(&ds, i, |p| p[0] ^= 0xff);
    assert_eq!(other, 0, "not other traffic");
    let at: Vec<&F> = after.iter().filter(|f| f.0 == ds[i].frame).collect();
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0].1, "malformed");
    assert!(at[0].3.contains("offset 0"), "{}", at[0].3);
    assert!(!clean.iter().any(|f| f.0 == ds[i].frame));
}

#[test]
fn a_battlegrounds_packet_with_a_damaged_header_is_its_session_malformed_packet() {
    use lwarscope::proto::battlegrounds::sim::{Config, run};
    let r = run(&Config {
        clients: 1,
        duration_ms: 1_500,
        ..Config::default()
    });
    let i = r.datagrams.len() / 2;
    let (clean, after, other) = damaged(&r.datagrams, i, |p| p[6] = 9);
    assert_eq!(other, 0, "not other traffic");
    let at: Vec<&F> = after
        .iter()
        .filter(|f| f.0 == r.datagrams[i].frame)
        .collect();
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0].1, "malformed");
    assert_eq!(
        at[0].3,
        "version 9 at offset 6 is unknown (only version 0 is defined)"
    );
    assert!(!clean.iter().any(|f| f.0 == r.datagrams[i].frame));
}

#[test]
fn a_datagram_without_a_mark_off_every_known_flow_is_other_traffic() {
    let ds = read("captures/strs-clean.pcap");
    let mut bad = ds.clone();
    let mut stray = bad[60].clone();
    stray.payload[0] = b's';
    stray.src.set_port(40_404);
    bad.insert(61, stray);
    let (_, other, _) = analyse(&bad);
    assert_eq!(other, 1);
}

/// Every finding, the summaries and the datagrams no protocol took, the
/// engine reading each datagram's probe marks taken ahead (as the
/// two-thread reader takes them, `Datagram::probes`) when `ahead`.
fn analyse_marked(ds: &[OwnedDatagram], ahead: bool) -> (Vec<F>, String, u64) {
    analyse_marked_with(ds, ahead, TrackerConfig::default())
}

/// [`analyse_marked`] with `config` (few sessions kept: the reader's
/// bindings outlive the engine's evicted sessions).
fn analyse_marked_with(
    ds: &[OwnedDatagram],
    ahead: bool,
    config: TrackerConfig,
) -> (Vec<F>, String, u64) {
    let mut engine = proto::engine(config);
    let mut marks = engine.probe_marks().expect("fewer than 64 protocols");
    let mut seen = Collect::default();
    for d in ds {
        let mut d = d.as_datagram();
        if ahead {
            d.probes = Some(marks.marks(&d));
        }
        engine.observe(&d, &mut seen);
    }
    let summaries = format!("{:?}", engine.finish(&mut seen));
    let findings = rows(&seen);
    (findings, summaries, engine.unrecognised().other)
}

/// Issue 37: the probes tested ahead recognise what the engine's own tests
/// do, on captures of every protocol, flows whose mark was damaged in place
/// (taken by their flow) included: the same findings, summaries and other
/// traffic. The reader stops at the protocol a handshake bound a flow to
/// (`engine::BOUND`): the same again where the engine no longer keeps the
/// flow (one session kept, the others evicted), and where a datagram of a
/// bound flow carries an earlier protocol's mark (lwar's appId).
#[test]
fn probe_marks_taken_ahead_recognise_as_the_engine_does() {
    let one = TrackerConfig {
        max_sessions: 1,
        ..TrackerConfig::default()
    };
    for pcap in [
        "captures/mixed-lwar-strs.pcap",
        "captures/bg-reorder.pcap",
        "captures/bg-midsession.pcap",
        "captures/bg-be-dup.pcap",
        "captures/ksy-vessel-faults.pcap",
        "captures/ksy-timewarp-faults.pcap",
        "captures/sim-corrupt.pcap",
        "captures/live-loopback.pcap",
    ] {
        let mut ds = read(pcap);
        assert!(!ds.is_empty(), "{pcap}");
        let plain = analyse_marked(&ds, false);
        assert_eq!(analyse_marked(&ds, true), plain, "{pcap}");
        let plain = analyse_marked_with(&ds, false, one);
        assert_eq!(analyse_marked_with(&ds, true, one), plain, "{pcap}, one");
        // Marks damaged in place: every seventh datagram's first byte.
        for d in ds.iter_mut().step_by(7) {
            if let Some(b) = d.payload.first_mut() {
                *b ^= 0x5a;
            }
        }
        // lwar's appId on every eleventh datagram.
        let app_id = read("captures/sim-clean.pcap")[0].payload[..4].to_vec();
        for d in ds.iter_mut().skip(5).step_by(11) {
            if d.payload.len() >= 4 {
                d.payload[..4].copy_from_slice(&app_id);
            }
        }
        let plain = analyse_marked(&ds, false);
        assert_eq!(analyse_marked(&ds, true), plain, "{pcap}, damaged");
        let plain = analyse_marked_with(&ds, false, one);
        assert_eq!(
            analyse_marked_with(&ds, true, one),
            plain,
            "{pcap}, damaged, one"
        );
    }
}

/// Issue 37: a datagram of a flow Battlegrounds' AUTH bound is tested up to
/// Battlegrounds' probe only, and marked so (`engine::BOUND`): the reader
/// does not test every later probe on it.
#[test]
fn probe_marks_stop_at_the_protocol_a_handshake_bound_the_flow_to() {
    use lwarscope::engine::BOUND;
    let ds = read("captures/bg-clean.pcap");
    let engine = proto::engine(TrackerConfig::default());
    let bg = engine.protocols().position(|p| p.name == "bg").unwrap();
    let mut marks = engine.probe_marks().unwrap();
    let all: Vec<u64> = ds.iter().map(|d| marks.marks(&d.as_datagram())).collect();
    assert_eq!(all[0], 1 << bg, "the AUTH");
    let bound = all.iter().filter(|&&m| m == BOUND | 1 << bg).count();
    let auths = all.iter().filter(|&&m| m == 1 << bg).count();
    assert_eq!(bound + auths, ds.len(), "{all:x?}");
    assert!(bound > auths, "{bound} bound, {auths} AUTHs");
}
