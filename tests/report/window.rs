//! `--window START..END` and `-Y` on the report: the report of a part of the
//! capture. The engine analyses every packet; the tables and the JSON summary
//! count the selected ones. A window over everything is the whole report, two
//! windows that split a capture add up to it, and what a filter's tables count
//! is what its packet lines show.

use crate::common;
use crate::program;

use common::lwarscope;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

fn json(args: &[&str]) -> Value {
    let out = lwarscope().args(args).output().unwrap();
    // Findings of severity error exit 1: still a report.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every capture shipped, each protocol and fault.
fn captures() -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures"))
            .unwrap()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                (name.ends_with(".pcap") || name.ends_with(".pcapng"))
                    .then(|| format!("captures/{name}"))
            })
            .collect();
    v.sort();
    assert!(v.len() >= 20, "{v:?}");
    v
}

#[test]
fn a_window_over_the_whole_capture_is_the_whole_report() {
    for capture in captures() {
        let whole = json(&["-r", &capture, "--format", "json"]);
        let mut part = json(&["-r", &capture, "--format", "json", "--window", "0.."]);
        assert_eq!(
            part["capture"]["selection"], "time >= 0",
            "{capture}: the summary says what it covers"
        );
        part["capture"].as_object_mut().unwrap().remove("selection");
        assert_eq!(whole, part, "{capture}");
    }
}

/// Adds the counts of `b` into `a`: numbers add, maps add key by key.
fn add(a: &mut Map<String, Value>, b: &Map<String, Value>) {
    for (k, v) in b {
        match (a.get_mut(k), v) {
            (Some(Value::Number(x)), Value::Number(y)) => {
                *a.get_mut(k).unwrap() = (x.as_u64().unwrap() + y.as_u64().unwrap()).into();
            }
            (Some(Value::Object(x)), Value::Object(y)) => add(x, y),
            (None, v) => {
                a.insert(k.clone(), v.clone());
            }
            (Some(x), y) => panic!("{k}: {x} and {y} do not add"),
        }
    }
}

/// What adds up over the parts of a capture, per session and direction:
/// packets, bytes, messages, findings, reliable messages, ack delays measured
/// and the loss counts.
fn counts(doc: &Value) -> BTreeMap<(u64, &'static str), Map<String, Value>> {
    let mut out = BTreeMap::new();
    for s in doc["summary"]["sessions"].as_array().unwrap() {
        for dir in ["c2s", "s2c"] {
            let d = &s[dir];
            let mut m = Map::new();
            for key in [
                "packets",
                "bytes",
                "first_sends",
                "repeats",
                "resends",
                "messages",
                "findings",
                "violations",
                "malformed",
            ] {
                m.insert(key.to_owned(), d[key].clone());
            }
            m.insert("ack_samples".to_owned(), d["ack_delay"]["samples"].clone());
            if let Value::Object(loss) = &d["loss"] {
                m.insert("loss".to_owned(), Value::Object(loss.clone()));
            }
            out.insert((s["session"].as_u64().unwrap(), dir), m);
        }
    }
    out
}

fn totals(doc: &Value) -> Map<String, Value> {
    let s = &doc["summary"];
    let mut m = Map::new();
    for key in ["messages", "findings", "violations", "malformed"] {
        m.insert(key.to_owned(), s[key].clone());
    }
    m.insert("protocols".to_owned(), doc["capture"]["protocols"].clone());
    m
}

#[test]
fn two_windows_that_split_a_capture_add_up_to_it() {
    for capture in captures() {
        let whole = json(&["-r", &capture, "--format", "json"]);
        let (Some(start), Some(end)) = (
            whole["capture"]["start"].as_f64(),
            whole["capture"]["end"].as_f64(),
        ) else {
            continue; // No packet of a known protocol.
        };
        let mid = format!("{:.3}", (end - start) / 2.0);
        let before = json(&[
            "-r",
            &capture,
            "--format",
            "json",
            "--window",
            &format!("..{mid}"),
        ]);
        let after = json(&[
            "-r",
            &capture,
            "--format",
            "json",
            "--window",
            &format!("{mid}.."),
        ]);
        let (mut sum, b) = (counts(&before), counts(&after));
        for (key, m) in b {
            add(sum.entry(key).or_default(), &m);
        }
        // A direction with no packet in a part is still listed when the
        // other direction had one: its zeros add nothing.
        let full = counts(&whole);
        for (key, m) in &full {
            let got = sum
                .get(key)
                .unwrap_or_else(|| panic!("{capture}: {key:?} in no part"));
            for (k, v) in m {
                let zero = v == &Value::from(0u64) || v.as_object().is_some_and(Map::is_empty);
                assert!(
                    got.get(k) == Some(v) || (zero && got.get(k).is_none()),
                    "{capture} ..{mid}.. {key:?} {k}: whole {v}, parts {:?}",
                    got.get(k)
                );
            }
        }
        let mut t = totals(&before);
        add(&mut t, &totals(&after));
        assert_eq!(t, totals(&whole), "{capture} split at {mid}");
        // The parts say what they count.
        assert!(
            before["capture"]["selection"]
                .as_str()
                .unwrap()
                .contains("time <")
        );
    }
}

/// The packets of each session and direction, and the findings, that `-T
/// fields` lists for a filter.
fn listed(capture: &str, filter: &str) -> (BTreeMap<(u64, String), u64>, BTreeMap<String, u64>) {
    let out = lwarscope()
        .args(["-r", capture, "-Y", filter, "-T", "fields"])
        .args(["-e", "lwarscope.session", "-e", "lwarscope.dir"])
        .args(["-e", "lwarscope.finding", "-E", "occurrence=a"])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)));
    let (mut packets, mut findings) = (BTreeMap::new(), BTreeMap::new());
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let key = (cols[0].parse().unwrap(), cols[1].to_owned());
        *packets.entry(key).or_default() += 1;
        for f in cols.get(2).into_iter().flat_map(|c| c.split(',')) {
            if !f.is_empty() {
                let kind = f.split('/').next().unwrap().to_owned();
                *findings.entry(kind).or_default() += 1;
            }
        }
    }
    (packets, findings)
}

#[test]
fn a_filter_s_tables_count_what_its_packet_lines_show() {
    for (capture, filter) in [
        ("captures/sim-loss.pcap", "ip.src == 127.0.0.2"),
        ("captures/sim-loss.pcap", "Input && time >= 1 && time < 3"),
        ("captures/strs-loss.pcap", "dir == s2c"),
        (
            "captures/mixed-lwar-strs.pcap",
            "udp.port == 32422 || frame.number > 200",
        ),
        ("captures/bg-loss.pcap", "len > 20"),
    ] {
        let doc = json(&["-r", capture, "-Y", filter, "--format", "json"]);
        assert_eq!(doc["capture"]["selection"], filter);
        let (packets, findings) = listed(capture, filter);
        assert!(!packets.is_empty(), "{capture} {filter}: selects nothing");
        let mut counted = BTreeMap::new();
        for s in doc["summary"]["sessions"].as_array().unwrap() {
            for dir in ["c2s", "s2c"] {
                let n = s[dir]["packets"].as_u64().unwrap();
                if n > 0 {
                    counted.insert((s["session"].as_u64().unwrap(), dir.to_owned()), n);
                }
            }
        }
        assert_eq!(counted, packets, "{capture} {filter}");
        // The packets' own findings are in the totals (those raised at the
        // end, with a frame of theirs, come on top).
        for (kind, n) in findings {
            let total = doc["summary"]["findings"][&kind].as_u64().unwrap_or(0);
            assert!(total >= n, "{capture} {filter} {kind}: {total} < {n}");
        }
    }
}

#[test]
fn a_resend_in_a_window_is_judged_by_what_came_before_it() {
    // sim-loss frame 61 at 0.793 s: player 1 sends Chat#2 a second time; the
    // first send is before the window.
    let doc = json(&[
        "-r",
        "captures/sim-loss.pcap",
        "--format",
        "json",
        "--window",
        "0.79..0.8",
    ]);
    let sessions = doc["summary"]["sessions"].as_array().unwrap();
    let s0 = sessions.iter().find(|s| s["session"] == 0).unwrap();
    assert_eq!(s0["c2s"]["resends"], 1, "{s0}");
    assert_eq!(s0["c2s"]["first_sends"], 0, "{s0}");
    assert_eq!(doc["summary"]["findings"]["resend"], 1);
    // The whole capture has more.
    let whole = json(&["-r", "captures/sim-loss.pcap", "--format", "json"]);
    assert!(whole["summary"]["findings"]["resend"].as_u64().unwrap() > 1);
}

#[test]
fn tables_follow_a_display_filter() {
    let out = lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "-Y",
            "ip.src == 127.0.0.3",
            "--tables",
        ])
        .env("COLUMNS", "160")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("selected by"), "{text}");
    assert!(text.contains("ip.src == 127.0.0.3"), "{text}");
    // One session, its client's packets only: none the other way.
    assert!(text.contains("127.0.0.3:50002"), "{text}");
    assert!(!text.contains("127.0.0.2:50001"), "{text}");
    // With --packets: the lines, then the tables.
    let out = lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "-Y",
            "resend",
            "--packets",
            "--tables",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.find("[resend#2 Chat]").expect("a packet line");
    let table = text.find("selected by").expect("the tables");
    assert!(line < table, "{text}");
}

#[test]
fn window_and_tables_are_refused_where_they_cannot_apply() {
    for (args, says) in [
        (&["--window", "5..2"][..], "ends before it starts"),
        (&["--window", ".."][..], "names no end"),
        (&["--window", "abc"][..], "START..END"),
        (&["--window=-1..3"][..], "not a number of seconds"),
        (&["--tables"][..], "the report is printed already"),
        (
            &["--tables", "-Y", "Join", "--format", "json"][..],
            "table format",
        ),
        (&["--tables", "-Y", "Join", "-q", "-z", "conv"][..], "-q"),
        // Both draw the capture on its own time axis.
        (
            &["--window", "2..4", "-q", "-z", "io,stat,1"][..],
            "-z io,stat counts the whole capture by time already: drop --window",
        ),
        (
            &["--window", "2..4", "--plot", "target/window.svg"][..],
            "--plot draws the whole capture on its time axis: drop --window",
        ),
        (
            &[
                "--window",
                "1..",
                "--format",
                "parquet",
                "--out",
                "target/window-parquet",
            ][..],
            if cfg!(feature = "parquet") {
                "drop --window"
            } else {
                "parquet"
            },
        ),
    ] {
        let out = lwarscope()
            .args(["-r", "captures/sim-loss.pcap"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        // One line (clap adds its pointer to --help after a bad value).
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(
            lines.len() == 1 || (lines.len() == 2 && lines[1].contains("--help")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// tshark's own `frame.time_relative` on a capture whose first frame is a
/// packet (every frame of sim-loss is lwar): the same packets, the same bytes.
#[test]
fn a_window_holds_the_frames_tshark_puts_in_it() {
    for (capture, window, filter) in [
        (
            "captures/sim-loss.pcap",
            "1..3",
            "frame.time_relative >= 1 && frame.time_relative < 3",
        ),
        (
            "captures/strs-loss.pcap",
            "..2.5",
            "frame.time_relative < 2.5",
        ),
        (
            "captures/bg-loss.pcap",
            "1.5..",
            "frame.time_relative >= 1.5",
        ),
    ] {
        // Not skipped when tshark is missing: CI installs it (.ci/run).
        let out = program::program("tshark")
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
            .args([
                "-r",
                capture,
                "-Y",
                filter,
                "-T",
                "fields",
                "-e",
                "udp.length",
            ])
            .output()
            .expect("tshark is installed (.ci/run installs it)");
        assert!(out.status.success(), "tshark on {capture}");
        let lengths: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse::<u64>().unwrap() - 8)
            .collect();
        assert!(!lengths.is_empty());
        let doc = json(&["-r", capture, "--format", "json", "--window", window]);
        let packets: u64 = doc["capture"]["protocols"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(
            doc["capture"]["other"], 0,
            "{capture}: every frame a packet"
        );
        assert_eq!(packets, lengths.len() as u64, "{capture} {window}");
        let bytes: u64 = doc["summary"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["c2s"]["bytes"].as_u64().unwrap() + s["s2c"]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(bytes, lengths.iter().sum::<u64>(), "{capture} {window}");
    }
}

/// `-w` with `--window` exports the frames of the window's packets, and no
/// other traffic (sim-corrupt has 27 frames of it).
#[test]
fn a_window_s_export_holds_its_packets_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("part.pcapng");
    let out = out.to_str().unwrap();
    let part = json(&[
        "-r",
        "captures/sim-corrupt.pcap",
        "--window",
        "1..3",
        "--format",
        "json",
        "-w",
        out,
    ]);
    let selected: u64 = part["capture"]["protocols"]["lwar"].as_u64().unwrap();
    assert!(selected > 100, "{selected}");
    let back = json(&["-r", out, "--format", "json"]);
    assert_eq!(back["capture"]["frames"], selected);
    assert_eq!(back["capture"]["other"], 0);
    assert_eq!(back["capture"]["protocols"]["lwar"], selected);
}
