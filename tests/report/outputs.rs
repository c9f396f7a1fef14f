//! Snapshots (insta) of what users read, on the captures of `captures/`: the
//! report tables, the packet views, and the JSON forms.

use lwarscope::capture::Source;
use lwarscope::command::report;
use lwarscope::report::json::read_summary;
use lwarscope::report::table::Layout;
use lwarscope::report::{Format, ReportArgs};
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// Runs the report on one capture, as `lwarscope -r captures/NAME ...` would, at
/// the width of a non-terminal (100 columns), without colour.
fn run(name: &str, args: ReportArgs) -> String {
    let path = capture(name);
    let mut source = Source::files(&[&path]).expect("capture opens");
    let mut out = Vec::new();
    // Shown as the user would type it, so snapshots do not depend on the checkout.
    let shown = [PathBuf::from(format!("captures/{name}"))];
    report(
        &args,
        &mut source,
        &shown,
        None,
        Layout {
            width: 100,
            color: false,
        },
        None,
        || &mut out,
    )
    .expect("the report runs");
    String::from_utf8(out).expect("UTF-8 output")
}

fn filtered(expr: &str) -> ReportArgs {
    ReportArgs {
        display_filter: Some(expr.to_owned()),
        ..Default::default()
    }
}

macro_rules! report_snapshots {
    ($($test:ident => $file:literal,)*) => {$(
        #[test]
        fn $test() {
            insta::assert_snapshot!(run($file, ReportArgs::default()));
        }
    )*};
}

report_snapshots! {
    report_real_server_clean => "real-server-clean.pcap",
    report_live_loopback => "live-loopback.pcap",
    report_sim_clean => "sim-clean.pcap",
    report_sim_loss => "sim-loss.pcap",
    report_sim_tap_miss => "sim-tap-miss.pcap",
    report_sim_reorder => "sim-reorder.pcap",
    report_sim_dup => "sim-dup.pcap",
    report_sim_corrupt => "sim-corrupt.pcap",
    report_sim_full => "sim-full.pcap",
    report_sim_timeout => "sim-timeout.pcap",
    report_sim_eight => "sim-eight.pcap",
    report_sim_ipv6 => "sim-ipv6.pcap",
}

#[test]
fn packets_real_server_first_frames() {
    insta::assert_snapshot!(run("real-server-clean.pcap", filtered("frame <= 40")));
}

#[test]
fn packets_of_the_handshake_with_every_field() {
    let args = ReportArgs {
        verbose: true,
        ..filtered("frame <= 3")
    };
    insta::assert_snapshot!(run("real-server-clean.pcap", args));
}

#[test]
fn packets_malformed_with_fields_and_hex() {
    let args = ReportArgs {
        verbose: true,
        hex: true,
        ..filtered("malformed && frame < 400")
    };
    insta::assert_snapshot!(run("sim-corrupt.pcap", args));
}

#[test]
fn packets_with_loss_findings() {
    insta::assert_snapshot!(run(
        "sim-loss.pcap",
        filtered("resend || lost || input-gap")
    ));
}

#[test]
fn packets_reordered_and_gaps() {
    insta::assert_snapshot!(run("sim-reorder.pcap", filtered("severity >= warning")));
}

#[test]
fn json_document_of_a_lossy_capture() {
    let text = run(
        "sim-loss.pcap",
        ReportArgs {
            format: Format::Json,
            ..Default::default()
        },
    );
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(doc["schema"], 2);
    assert!(doc.get("packets").is_none(), "packets only with --packets");
    insta::assert_json_snapshot!(doc);
}

#[test]
fn json_document_with_packets() {
    let text = run(
        "real-server-clean.pcap",
        ReportArgs {
            format: Format::Json,
            packets: true,
            ..filtered("frame <= 4 || frame == 399")
        },
    );
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(doc["packets"].as_array().map(Vec::len), Some(5));
    insta::assert_json_snapshot!(doc);
}

#[test]
fn jsonl_stream_of_a_corrupt_capture() {
    let text = run(
        "sim-corrupt.pcap",
        ReportArgs {
            format: Format::Jsonl,
            ..filtered("malformed && frame < 300")
        },
    );
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is a JSON object"))
        .collect();
    assert!(lines.iter().all(|l| l["schema"] == 2));
    assert_eq!(lines.last().unwrap()["type"], "summary");
    insta::assert_snapshot!(text);
}

/// The JSON summary is the tracker's, and reads back as the ground truth of the
/// simulated captures (where the tracker agrees with it).
#[test]
fn json_summary_reads_back_and_matches_the_ground_truth() {
    for name in [
        "sim-clean",
        "sim-loss",
        "sim-tap-miss",
        "sim-dup",
        "sim-timeout",
    ] {
        for format in [Format::Json, Format::Jsonl] {
            let text = run(
                &format!("{name}.pcap"),
                ReportArgs {
                    format,
                    ..Default::default()
                },
            );
            let mut summary = read_summary(&text).expect("the summary reads back");
            // The loss estimate reads back too; the truth states counts only.
            assert!(
                summary.sessions.iter().any(|s| s.s2c.loss.is_some()),
                "{name} {format:?}: no loss estimate"
            );
            for s in &mut summary.sessions {
                s.c2s.loss = None;
                s.s2c.loss = None;
            }
            let truth_text =
                std::fs::read_to_string(capture(&format!("{name}.truth.json"))).unwrap();
            let truth = read_summary(&truth_text).expect("the truth has a summary");
            assert_eq!(summary, truth, "{name} {format:?}");
        }
    }
}

/// Findings raised at the end of the capture (`lost`, `not-captured`) come after
/// the last packet, before the summary.
#[test]
fn jsonl_lost_seqnos_come_at_the_end() {
    let text = run(
        "sim-tap-miss.pcap",
        ReportArgs {
            format: Format::Jsonl,
            ..filtered("lost || not-captured || gap")
        },
    );
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!("{} {}", v["type"], v["kind"])
        })
        .collect();
    assert_eq!(kinds.last().unwrap(), "\"summary\" null");
    assert_eq!(kinds[kinds.len() - 2], "\"finding\" \"not-captured\"");
    let without_summary: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("\"summary\""))
        .collect();
    insta::assert_snapshot!(without_summary.join("\n"));
}
