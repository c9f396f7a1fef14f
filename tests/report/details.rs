//! Finding details read alike for every protocol: a position is `at offset N`
//! (never `at byte N`), a shortage `... is truncated: it needs N bytes, M are
//! left`, and the three kinds that concern bytes (`truncated` by the capture,
//! `malformed` by the sender, a `violation` of a rule) stay apart, each with
//! its offset.

use crate::common::lwarscope;
use std::path::Path;

/// The (kind, frame, detail) of every `truncated`, `malformed` and
/// `violation` finding of a run, in the order JSON Lines gives them.
fn byte_findings(args: &[&str]) -> Vec<(String, u64, String)> {
    let out = lwarscope()
        .args(args)
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut found = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] != "finding" {
            continue;
        }
        let kind = v["kind"].as_str().unwrap_or_default();
        if matches!(kind, "truncated" | "malformed" | "violation") {
            found.push((
                kind.to_owned(),
                v["frame"].as_u64().unwrap_or_default(),
                v["detail"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    found
}

/// A copy of a little-endian classic pcap whose every frame the capture kept
/// only its first `snap` bytes of (as `editcap -s` writes it).
fn cut_copy(name: &str, snap: usize, dir: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("captures").join(name)).unwrap();
    assert_eq!(
        &bytes[..2],
        &[0x4d, 0x3c],
        "a little-endian nanosecond pcap"
    );
    let mut out = bytes[..24].to_vec();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let keep = incl.min(snap);
        out.extend_from_slice(&bytes[at..at + 8]);
        out.extend_from_slice(&(keep as u32).to_le_bytes());
        out.extend_from_slice(&bytes[at + 12..at + 16]);
        out.extend_from_slice(&bytes[at + 16..at + 16 + keep]);
        at += 16 + incl;
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The detail of the finding of `kind` in `frame`.
fn detail<'a>(found: &'a [(String, u64, String)], kind: &str, frame: u64) -> &'a str {
    found
        .iter()
        .find(|(k, f, _)| k == kind && *f == frame)
        .map(|(_, _, d)| d.as_str())
        .unwrap_or_else(|| panic!("no {kind} in frame {frame}: {found:#?}"))
}

/// Every protocol places what it could not decode, or what broke a rule, in
/// the same words: `at offset N`. Before, Vessel and the described protocols
/// said `at byte N` (and their shortages `needs N bytes, M left`).
#[test]
fn every_protocol_places_its_errors_at_an_offset() {
    let cases: [(&[&str], &str, u64, &str); 10] = [
        (
            &["-r", "captures/sim-corrupt.pcap"],
            "malformed",
            15,
            "Input at offset 12 is truncated: it needs 23 bytes, 9 are left",
        ),
        (
            &["-r", "captures/strs-corrupt.pcap"],
            "malformed",
            16,
            "unknown packetType 0x0400 at offset 4",
        ),
        (
            &["-r", "captures/strs-corrupt.pcap"],
            "violation",
            106,
            "PlayerInput moveX at offset 16 is 2, outside [-1, 1]",
        ),
        (
            &["-r", "captures/bg-corrupt.pcap"],
            "malformed",
            3,
            "AUTH_OK fixed part at offset 8 is truncated: it needs 34 bytes, 1 are left",
        ),
        (
            &["-r", "captures/vessel-faults.pcap"],
            "malformed",
            100,
            "field 6 (vessel.shipSensors) at offset 24 is truncated: it needs 92 bytes, 90 are left",
        ),
        (
            &["-r", "captures/ksy-vessel-faults.pcap"],
            "malformed",
            302,
            "short: field `vessel_fixed.body.objects.vel_x` at offset 57 is truncated: \
             it needs 4 bytes, 2 are left",
        ),
        (
            &["-r", "captures/ksy-vessel-faults.pcap"],
            "violation",
            241,
            "`vessel_fixed.body.input.throttle_left` = 1.5 at offset 11, not in [0, 1]",
        ),
        (
            &["-r", "captures/ksy-timewarp-faults.pcap"],
            "malformed",
            65,
            "short: field `timewarp.body.ships.vel_y` at offset 91 is truncated: \
             it needs 4 bytes, 1 are left",
        ),
        (
            &["-r", "captures/ksy-timewarp-faults.pcap"],
            "malformed",
            75,
            "unknown-type: field `timewarp.flag` at offset 0: 66 is not in its enum",
        ),
        (
            &[
                "-r",
                "captures/vessel-faults.pcap",
                "-X",
                "proto:protocols/vessel-protobuf.yaml",
                "-d",
                "udp.port==41004,vessel_pb",
            ],
            "malformed",
            100,
            "past-end: `vessel_pb.shipSensors` at offset 24 is truncated: \
             it needs 92 bytes, 90 are left in its message",
        ),
    ];
    for (args, kind, frame, want) in cases {
        let found = byte_findings(args);
        for (k, f, d) in &found {
            assert!(
                !d.contains("at byte"),
                "{args:?}: {k} in frame {f} says `at byte`: {d}"
            );
        }
        assert_eq!(detail(&found, kind, frame), want, "{args:?}");
    }
}

/// A finding expected: its kind, frame and detail.
type Want<'a> = (&'a str, u64, &'a str);

/// The capture's cut, the sender's error and a broken rule are three kinds,
/// each placed at its offset: a packet cut by a snapshot length is
/// `truncated` (with what the capture kept), never `malformed`, and a
/// violation in what the capture kept is still a `violation`.
#[test]
fn truncated_malformed_and_violation_stay_apart_with_their_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[Want]); 2] = [
        (
            "vessel-clean.pcap",
            &[(
                "truncated",
                1,
                "field 4 (vessel.shipInput) at offset 10 is truncated: it needs 12 bytes, \
                 9 are left (capture kept 20 of 23 bytes)",
            )],
        ),
        (
            "ksy-vessel-faults.pcap",
            &[
                (
                    "truncated",
                    2,
                    "short: field `vessel_fixed.body.input.thrusters` at offset 20 is truncated: \
                     it needs 1 bytes, 0 are left (capture kept 20 of 27 bytes)",
                ),
                (
                    "violation",
                    241,
                    "`vessel_fixed.body.input.throttle_left` = 1.5 at offset 11, not in [0, 1]",
                ),
            ],
        ),
    ];
    for (name, want) in cases {
        // 42 bytes of Ethernet, IPv4 and UDP headers, 20 of the payload.
        let path = cut_copy(name, 62, dir.path());
        let found = byte_findings(&["-r", &path]);
        for (kind, frame, d) in want {
            assert_eq!(detail(&found, kind, *frame), *d, "{name}");
        }
        assert!(
            !found.iter().any(|(k, _, _)| k == "malformed"),
            "{name}: a cut is not the sender's: {found:#?}"
        );
    }
}
