//! Vessel's simulator and its corpus (`captures/vessel-*.pcap`): each capture
//! regenerates byte for byte from its request here, its committed
//! `*.truth.json` is the simulator's, and the analysis finds exactly the
//! truth, session by session. Every situation is in each capture (vessel k
//! plays situation k mod 5: a join, a version mismatch, a denied join, a
//! rejoin with a stale id, a crash).
//!
//! To rewrite the corpus after a deliberate change:
//! `VESSEL_WRITE_CORPUS=1 cargo test --test vessel sim::`.

use lwarscope::proto::sim::{Rates, SimRequest};
use lwarscope::proto::vessel::sim::sim_request;
use std::path::{Path, PathBuf};

use crate::vessel_common;

fn both(r: f64) -> Rates {
    Rates { c2s: r, s2c: r }
}

fn corpus() -> Vec<(&'static str, SimRequest)> {
    let base = SimRequest {
        write: PathBuf::new(),
        truth: true,
        seed: 1,
        clients: 5,
        duration_ms: 10_000,
        loss: Rates::default(),
        duplicate: Rates::default(),
        reorder: Rates::default(),
        corrupt: Rates::default(),
        tap_miss: Rates::default(),
        byte_order: None,
    };
    vec![
        ("vessel-clean", base.clone()),
        (
            "vessel-faults",
            SimRequest {
                seed: 2,
                loss: both(0.03),
                duplicate: both(0.02),
                reorder: both(0.02),
                corrupt: both(0.01),
                tap_miss: both(0.02),
                ..base.clone()
            },
        ),
        (
            "vessel-tapmiss",
            SimRequest {
                seed: 3,
                tap_miss: both(0.05),
                ..base
            },
        ),
    ]
}

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
}

#[test]
fn the_corpus_regenerates_and_the_analysis_finds_its_truth() {
    let dir = tempfile::tempdir().unwrap();
    let write = std::env::var_os("VESSEL_WRITE_CORPUS").is_some();
    for (stem, mut req) in corpus() {
        let out = if write {
            captures().join(format!("{stem}.pcap"))
        } else {
            dir.path().join(format!("{stem}.pcap"))
        };
        req.write = out.clone();
        sim_request(&req).unwrap();
        let pcap = captures().join(format!("{stem}.pcap"));
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&pcap).unwrap(),
            "{stem}"
        );
        let truth_text = std::fs::read_to_string(pcap.with_extension("truth.json")).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.with_extension("truth.json")).unwrap(),
            truth_text,
            "{stem}"
        );
        let truth: serde_json::Value = serde_json::from_str(&truth_text).unwrap();
        let want: std::collections::BTreeMap<
            String,
            std::collections::BTreeMap<String, serde_json::Value>,
        > = serde_json::from_value(truth["sessions"].clone()).unwrap();
        let got = vessel_common::analyse(&pcap);
        assert_eq!(got, want, "{stem}");
        let states: Vec<_> = got.values().map(|s| s["state"].as_str().unwrap()).collect();
        assert_eq!(
            states,
            ["open", "version-mismatch", "denied", "open", "timed-out"],
            "{stem}"
        );
    }
}

/// Tap misses alone: notes only, never a warning or an error (the truth
/// holds `sync-skipped` notes and no other finding: checked above).
#[test]
fn a_capture_whose_only_fault_is_tap_misses_gives_no_warning() {
    let pcap = captures().join("vessel-tapmiss.pcap");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lwarscope"))
        .args([
            "check",
            "--deny",
            "lost,reordered,malformed,violation,duplicate-packet",
        ])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sim_writes_the_corpus_capture_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.pcap");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_lwarscope"))
        .args([
            "sim", "--proto", "vessel", "--seed", "1", "-c", "5", "-d", "10", "-w",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(captures().join("vessel-clean.pcap")).unwrap()
    );
}
