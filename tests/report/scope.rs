//! `--session N`: the report of a part of the capture. Every output counts the
//! named sessions only, and what it counts of them is what the whole report
//! says of them.

use crate::common;

use common::lwarscope;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = lwarscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The JSON summary's session `id`.
fn session(doc: &Value, id: u64) -> &Value {
    doc["summary"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

/// A count summed over the given sessions' directions.
fn dir_sum(doc: &Value, ids: &[u64], key: &str, name: &str) -> u64 {
    ids.iter()
        .flat_map(|&id| {
            let s = session(doc, id);
            [s["c2s"][key][name].as_u64(), s["s2c"][key][name].as_u64()]
        })
        .map(|n| n.unwrap_or(0))
        .sum()
}

#[test]
fn a_session_s_report_is_what_the_whole_report_says_of_it() {
    for (capture, ids) in [
        ("captures/strs-loss.pcap", &[2u64][..]),
        ("captures/strs-loss.pcap", &[0, 2][..]),
        ("captures/mixed-lwar-strs.pcap", &[1][..]),
        ("captures/sim-loss.pcap", &[1][..]),
    ] {
        let whole = json(&["-r", capture, "--format", "json"]);
        let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let part = json(&[
            "-r",
            capture,
            "--format",
            "json",
            "--session",
            &list.join(","),
        ]);
        assert_eq!(
            part["capture"]["sessions_only"],
            serde_json::json!(ids),
            "{capture}"
        );
        assert_eq!(part["capture"]["frames"], whole["capture"]["frames"]);
        let listed: Vec<u64> = part["summary"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session"].as_u64().unwrap())
            .collect();
        assert_eq!(listed, ids, "{capture}");
        assert_eq!(part["summary"]["session_count"], ids.len());
        for &id in ids {
            assert_eq!(session(&part, id), session(&whole, id), "{capture} #{id}");
        }
        // The totals are the named sessions' sums, findings and messages alike.
        for (key, names) in [
            (
                "findings",
                &["lost", "duplicate-packet", "input-gap", "repeat", "resend"][..],
            ),
            (
                "messages",
                &["PlayerInput", "Input", "Update", "WorldSnapshot"][..],
            ),
        ] {
            for name in names {
                let total = part["summary"][key][name].as_u64().unwrap_or(0);
                assert_eq!(
                    total,
                    dir_sum(&whole, ids, key, name),
                    "{capture} {key} {name}"
                );
            }
        }
        let packets: u64 = ids
            .iter()
            .map(|&id| {
                let s = session(&whole, id);
                s["c2s"]["packets"].as_u64().unwrap() + s["s2c"]["packets"].as_u64().unwrap()
            })
            .sum();
        let counted: u64 = part["capture"]["protocols"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(counted, packets, "{capture}");
        // The findings listed are the named sessions' own.
        for f in part["findings"].as_array().unwrap() {
            assert!(ids.contains(&f["session"].as_u64().unwrap()), "{f}");
        }
    }
}

#[test]
fn packet_lines_statistics_and_fields_follow_the_session() {
    let out = lwarscope()
        .args([
            "-r",
            "captures/strs-loss.pcap",
            "--session",
            "1",
            "-T",
            "fields",
        ])
        .args(["-e", "lwarscope.session", "-e", "frame.number"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 188, "session 1's 93 + 95 packets");
    assert!(text.lines().all(|l| l.starts_with("1\t")), "{text}");

    let doc = json(&[
        "-r",
        "captures/strs-loss.pcap",
        "--session",
        "1",
        "--format",
        "json",
        "-z",
        "io,stat,0",
    ]);
    let io = &doc["statistics"][0]["intervals"][0];
    assert_eq!(io["c2s"]["packets"], 93);
    assert_eq!(io["s2c"]["packets"], 95);
}

#[test]
fn a_session_the_capture_does_not_have_is_an_error() {
    let out = lwarscope()
        .args(["-r", "captures/strs-loss.pcap", "--session", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--session 9: no such session"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    for args in [
        &["-r", "captures/", "--session", "1"][..],
        &["-r", "captures/strs-loss.pcap", "-j", "2", "--session", "1"][..],
    ] {
        let out = lwarscope().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--session names sessions of one capture"),
            "{err}"
        );
    }

    let out = lwarscope()
        .args(["-r", "captures/strs-loss.pcap", "--tui", "--session", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--session applies to printed output"));
}
