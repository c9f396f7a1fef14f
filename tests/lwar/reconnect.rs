//! A client that connects again from the same address and port is a new session
//! (Wireshark's "port numbers reused"): a copy of `captures/sim-clean.pcap`
//! shifted by 10 s and merged with the original gives 4 sessions, each with the
//! findings of the original, and none of the false findings a merged session
//! would raise (reordered, ack-regression, input-regression, spurious-resend).

use assert_cmd::Command;
use lwarscope::capture::synth::{Link, PcapWriter, udp_frame};
use lwarscope::capture::{LinkType, OwnedDatagram, Source, Timestamp};
use lwarscope::engine::{Counts, Summary};
use lwarscope::proto::lwar::Tracker;
use std::path::{Path, PathBuf};

const SHIFT_NS: u64 = 10_000_000_000;

fn clean() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/sim-clean.pcap")
}

fn datagrams(path: &Path) -> Vec<OwnedDatagram> {
    let mut source = Source::files(&[path]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let Some(d) = frame.datagram() {
            out.push(d.to_owned_datagram());
        }
    }
    out
}

fn analyse(datagrams: &[OwnedDatagram]) -> Summary {
    let mut tracker = Tracker::default();
    for d in datagrams {
        tracker.observe(&d.as_datagram(), &mut ());
    }
    tracker.finish(&mut ())
}

fn doubled(counts: &Counts) -> Counts {
    counts.iter().map(|(k, v)| (k.clone(), v * 2)).collect()
}

#[test]
fn a_reconnect_from_the_same_ports_is_a_new_session() {
    let original = datagrams(&clean());
    let once = analyse(&original);
    assert_eq!(once.sessions.len(), 2);

    let mut merged = original.clone();
    merged.extend(original.iter().map(|d| OwnedDatagram {
        ts: Timestamp(d.ts.nanos() + SHIFT_NS),
        frame: d.frame + original.len() as u64,
        ..d.clone()
    }));
    let twice = analyse(&merged);
    assert_eq!(twice.sessions.len(), 4, "{:#?}", twice.sessions);
    assert_eq!(twice.findings, doubled(&once.findings));
    assert_eq!(twice.messages, doubled(&once.messages));
    for (a, b) in twice.sessions.iter().zip(once.sessions.iter().cycle()) {
        assert_eq!(a.state, b.state);
        assert_eq!(a.c2s, b.c2s);
        assert_eq!(a.s2c, b.s2c);
    }
    for false_finding in [
        "reordered",
        "ack-regression",
        "input-regression",
        "spurious-resend",
    ] {
        assert!(
            !twice.findings.contains_key(false_finding),
            "{false_finding}"
        );
    }
}

#[test]
fn files_read_together_whose_ports_overlap_are_separate_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let shifted = dir.path().join("shifted.pcap");
    let mut w = PcapWriter::create(&shifted, LinkType::Ethernet).unwrap();
    for d in datagrams(&clean()) {
        let frame = udp_frame(Link::Ethernet, d.src, d.dst, &d.payload);
        w.write(Timestamp(d.ts.nanos() + SHIFT_NS), &frame);
    }
    w.finish().unwrap();
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .arg("-r")
        .arg(clean())
        .arg(&shifted)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions = doc["summary"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 4);
    assert!(
        sessions.iter().all(|s| s["state"] == "closed"),
        "{sessions:#?}"
    );
}
