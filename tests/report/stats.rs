//! `-z io,stat`, `-z conv`, `-z expert` and `-q`, as a user runs them, against
//! tshark where tshark has the same notion (frames per interval).

use crate::common;
use crate::program;

use common::lwarscope;
use serde_json::Value;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> String {
    let out = lwarscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "lwarscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The one-line error and exit status of a refused run.
fn refused(args: &[&str]) -> String {
    let out = lwarscope().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "lwarscope {args:?} should be refused"
    );
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    // One line, or clap's with its hint to --help.
    let lines: Vec<&str> = err.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        lines.len() == 1 || (lines.len() == 2 && lines[1].contains("--help")),
        "one line: {err}"
    );
    lines[0].to_owned()
}

/// tshark's frame counts per interval of `-z io,stat,INTERVAL[,FILTER]`:
/// the first column of each `| a <> b | frames | bytes |` row.
fn tshark_frames(file: &str, stat: &str) -> Vec<u64> {
    // Not skipped when tshark is missing: CI installs it (.ci/run).
    let out = program::program("tshark")
        .current_dir(root())
        .args(["-r", file, "-q", "-z", stat])
        .output()
        .expect("tshark is installed (.ci/run installs it)");
    assert!(out.status.success(), "tshark -z {stat}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.contains("<>"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            cells[2].parse().unwrap()
        })
        .collect()
}

fn io_stat(file: &str, stat: &str) -> Value {
    let out = run(&["-r", file, "--format", "json", "-z", stat]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let stats = doc["statistics"].as_array().unwrap();
    assert_eq!(stats.len(), 1);
    assert_eq!(stats[0]["type"], "io_stat");
    stats[0].clone()
}

fn per_interval(stat: &Value, f: impl Fn(&Value) -> u64) -> Vec<u64> {
    stat["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect()
}

#[test]
fn packets_per_interval_match_tshark_frames() {
    // Captures where every frame is a game packet: tshark's frames are our
    // packets. One of each protocol.
    for (file, server_port) in [
        ("captures/sim-loss.pcap", 32422),
        ("captures/strs-loss.pcap", 0),
        ("captures/bg-loss.pcap", 0),
    ] {
        for interval in ["1", "0.5", "0"] {
            let stat = io_stat(file, &format!("io,stat,{interval}"));
            let ours = per_interval(&stat, |r| {
                r["c2s"]["packets"].as_u64().unwrap() + r["s2c"]["packets"].as_u64().unwrap()
            });
            let theirs = tshark_frames(file, &format!("io,stat,{interval}"));
            assert!(!theirs.is_empty());
            assert_eq!(ours, theirs, "{file} io,stat,{interval}");
        }
        if server_port != 0 {
            // A filter column: the server's packets.
            let stat = io_stat(file, "io,stat,1,dir == s2c");
            let ours = per_interval(&stat, |r| {
                r["c2s"]["filters"][0]["packets"].as_u64().unwrap()
                    + r["s2c"]["filters"][0]["packets"].as_u64().unwrap()
            });
            let s2c = per_interval(&stat, |r| r["s2c"]["packets"].as_u64().unwrap());
            assert_eq!(ours, s2c);
            let theirs = tshark_frames(file, &format!("io,stat,1,udp.srcport=={server_port}"));
            assert_eq!(ours, theirs, "{file} s2c per interval");
        }
    }
}

#[test]
fn resends_and_ack_delays_add_up_to_the_report() {
    for file in ["captures/sim-loss.pcap", "captures/strs-loss.pcap"] {
        let out = run(&["-r", file, "--format", "json", "-z", "io,stat,0.25"]);
        let doc: Value = serde_json::from_str(&out).unwrap();
        let stat = &doc["statistics"][0];
        let sum = |dir: &str, key: &str| -> u64 {
            per_interval(stat, |r| r[dir][key].as_u64().unwrap())
                .iter()
                .sum()
        };
        let sessions = doc["summary"]["sessions"].as_array().unwrap();
        let total = |dir: &str, key: &str| -> u64 {
            sessions
                .iter()
                .map(|s| s[dir][key].as_u64().unwrap_or(0))
                .sum()
        };
        let mut resends = 0;
        for dir in ["c2s", "s2c"] {
            assert_eq!(
                sum(dir, "resends"),
                total(dir, "resends"),
                "{file} {dir} resends"
            );
            assert_eq!(sum(dir, "bytes"), total(dir, "bytes"), "{file} {dir} bytes");
            assert!(
                sum(dir, "ack_delay_samples") > 10,
                "{file} {dir} ack delays"
            );
            resends += sum(dir, "resends");
        }
        assert!(resends > 0, "{file} has resends");
        // Interval boundaries: 0.25 s apart, the last ends with the capture.
        let intervals = stat["intervals"].as_array().unwrap();
        assert_eq!(intervals[1]["start"], 0.25);
        let duration = stat["duration_secs"].as_f64().unwrap();
        assert_eq!(intervals.last().unwrap()["end"].as_f64().unwrap(), duration);
        assert_eq!(intervals.len(), (duration / 0.25).floor() as usize + 1);
    }
}

#[test]
fn lost_messages_count_where_their_gap_was() {
    // Starstrike's loss capture has `lost` messages, counted at their gaps,
    // not all at the end of the capture.
    let file = "captures/strs-loss.pcap";
    let out = run(&["-r", file, "--format", "json", "-z", "io,stat,1"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let stat = &doc["statistics"][0];
    let lost: Vec<u64> = per_interval(stat, |r| {
        r["c2s"]["lost"].as_u64().unwrap() + r["s2c"]["lost"].as_u64().unwrap()
    });
    let total: u64 = lost.iter().sum();
    let findings = doc["summary"]["findings"]["lost"].as_u64().unwrap_or(0);
    assert_eq!(total, findings);
    assert!(total > 0, "strs-loss has lost messages");
    let with_loss = lost.iter().filter(|&&n| n > 0).count();
    assert!(with_loss > 1, "spread over the capture: {lost:?}");
}

#[test]
fn quiet_prints_only_the_statistics_in_the_order_given() {
    let out = run(&[
        "-r",
        "captures/sim-loss.pcap",
        "-q",
        "-z",
        "expert",
        "-z",
        "io,stat,2,resend",
        "-z",
        "conv",
    ]);
    let expert = out.find("Expert information (-z expert)").unwrap();
    let io = out
        .find("IO statistics (-z io,stat,2,resend): 7.532 s of capture")
        .unwrap();
    let conv = out.find("Conversations (-z conv)").unwrap();
    assert!(expert < io && io < conv, "{out}");
    assert!(out.contains("#1: resend"));
    assert!(out.contains("6 <> Dur"));
    // No report tables.
    assert!(!out.contains("frames read"), "{out}");
    let with_report = run(&["-r", "captures/sim-loss.pcap", "-z", "expert"]);
    assert!(with_report.len() > out.len() / 4);
    assert!(with_report.contains("Expert information"));
}

#[test]
fn expert_keeps_the_severities_asked_for() {
    let file = "captures/sim-corrupt.pcap";
    let out = run(&[
        "-r",
        file,
        "--format",
        "json",
        "-z",
        "expert,error",
        "-z",
        "expert",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let errors = doc["statistics"][0]["findings"].as_array().unwrap();
    let all = doc["statistics"][1]["findings"].as_array().unwrap();
    assert!(!errors.is_empty());
    assert!(errors.iter().all(|f| f["severity"] == "error"));
    assert!(all.len() > errors.len());
}

#[test]
fn conv_in_json_carries_every_session_figure() {
    let out = run(&[
        "-r",
        "captures/sim-loss.pcap",
        "--format",
        "json",
        "-z",
        "conv",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let sessions = doc["statistics"][0]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 3);
    let s = &sessions[0];
    assert_eq!(s["protocol"], "lwar");
    assert_eq!(s["player"]["id"], "1:1");
    assert_eq!(s["state"], "closed");
    for key in [
        "packets",
        "bytes",
        "ack_delay_p50_ms",
        "ack_delay_p95_ms",
        "unacked",
        "jitter_ms",
        "loss",
    ] {
        assert!(s["c2s"].get(key).is_some(), "{key}");
    }
    assert_eq!(s["c2s"]["packets"], 202);
}

#[test]
fn jsonl_writes_one_statistics_object_a_line_after_the_summary() {
    let out = run(&[
        "-r",
        "captures/sim-loss.pcap",
        "--format",
        "jsonl",
        "-z",
        "io,stat,0",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let n = lines.len();
    assert_eq!(lines[n - 2]["type"], "summary");
    assert_eq!(lines[n - 1]["type"], "io_stat");
    assert_eq!(lines[n - 1]["schema"], lines[n - 2]["schema"]);
    assert_eq!(lines[n - 1]["intervals"].as_array().unwrap().len(), 1);
}

#[test]
fn options_that_cannot_apply_are_refused() {
    let file = "captures/sim-loss.pcap";
    assert!(refused(&["-r", file, "-q"]).contains("-q leaves nothing to print: add -z STATISTICS"));
    assert!(refused(&["-r", file, "-q", "-z", "conv", "--format", "json"]).contains("drop -q"));
    assert!(refused(&["-r", file, "-q", "-z", "conv", "--packets"]).contains("--packets"));
    assert!(
        refused(&["-r", file, "-q", "-z", "conv", "-Y", "resend"]).contains("io,stat,1,FILTER")
    );
    assert!(refused(&["-r", file, "-z", "io,stat"]).contains("needs an interval"));
    assert!(
        refused(&["-r", file, "-z", "io,stat,1,seqno =="]).contains("filter `seqno ==`: column 9")
    );
    assert!(refused(&["-r", file, "-z", "follow,udp"]).contains("unknown statistics"));
    assert!(refused(&["-r", file, "-z", "conv", "--tui"]).contains("-z applies to printed output"));
}

/// A statistic's JSON by its position among the `statistics`.
fn statistics(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let doc: Value = serde_json::from_str(&run(&all)).unwrap();
    doc["statistics"].as_array().unwrap().clone()
}

#[test]
fn conv_with_a_filter_counts_the_packets_the_filter_selects() {
    let window = "frame.time_relative >= 2 && frame.time_relative < 4";
    for file in [
        "captures/strs-loss.pcap",
        "captures/sim-loss.pcap",
        "captures/bg-loss.pcap",
    ] {
        let stats = statistics(&["-r", file, "-z", &format!("conv,udp,{window}")]);
        assert_eq!(stats[0]["filter"], window);
        // The same selection through another output: one line a packet.
        let lines = run(&[
            "-r",
            file,
            "-Y",
            window,
            "-T",
            "fields",
            "-e",
            "lwarscope.session",
            "-e",
            "lwarscope.dir",
        ]);
        let mut expected = std::collections::BTreeMap::<(u64, String), u64>::new();
        for l in lines.lines() {
            let (s, d) = l.split_once('\t').unwrap();
            *expected
                .entry((s.parse().unwrap(), d.to_owned()))
                .or_default() += 1;
        }
        let mut counted = std::collections::BTreeMap::new();
        for s in stats[0]["sessions"].as_array().unwrap() {
            let id = s["session"].as_u64().unwrap();
            for d in ["c2s", "s2c"] {
                let n = s[d]["packets"].as_u64().unwrap();
                if n > 0 {
                    counted.insert((id, d.to_owned()), n);
                }
            }
            let start = s["start_relative_secs"].as_f64().unwrap();
            assert!((2.0..4.0).contains(&start), "{file}: {s}");
            assert!(
                start + s["duration_secs"].as_f64().unwrap() < 4.0,
                "{file}: {s}"
            );
        }
        assert!(!counted.is_empty(), "{file}");
        assert_eq!(counted, expected, "{file}");
    }
}

#[test]
fn expert_with_a_filter_counts_the_findings_of_the_frames_it_selects() {
    let file = "captures/strs-loss.pcap";
    let by_kind = |stat: &Value| -> std::collections::BTreeMap<String, u64> {
        stat["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["finding"].as_str().unwrap().to_owned(),
                    r["count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // Complementary filters split every finding between them.
    let stats = statistics(&[
        "-r",
        file,
        "-z",
        "expert",
        "-z",
        "expert,frame.time_relative < 2.5",
        "-z",
        "expert,note,frame.time_relative >= 2.5",
    ]);
    let (all, before, after) = (by_kind(&stats[0]), by_kind(&stats[1]), by_kind(&stats[2]));
    assert!(before.values().sum::<u64>() > 0 && after.values().sum::<u64>() > 0);
    for (kind, n) in &all {
        let split = before.get(kind).unwrap_or(&0) + after.get(kind).unwrap_or(&0);
        assert_eq!(split, *n, "{kind}");
    }
    // A session's findings are what --session gives.
    let one = statistics(&["-r", file, "-z", "expert,warn,session == 2"]);
    let scoped = statistics(&["-r", file, "--session", "2", "-z", "expert,warn"]);
    assert_eq!(by_kind(&one[0]), by_kind(&scoped[0]));
    assert_eq!(by_kind(&one[0]).get("lost"), Some(&14));
}
