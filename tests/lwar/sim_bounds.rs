//! `lwarscope sim -w F -n N` ends even when nothing can be captured: refused at
//! once for a tap that misses everything, an error after 60 s of simulated time
//! without a capture otherwise (it used to run forever, growing ~170 MB/s).
//! And its summary line counts the faults it injected, truth written or not.

use assert_cmd::Command;
use std::time::{Duration, Instant};

fn sim(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.pcap");
    let start = Instant::now();
    let o = Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["sim", "-w", out.to_str().unwrap()])
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{args:?} took {:?}",
        start.elapsed()
    );
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_packet_count_that_can_never_be_reached_is_an_error() {
    let (code, err) = sim(&["-n", "1000", "--tap-miss", "100%"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err.trim(),
        "error: invalid configuration: --tap-miss 100% both ways captures nothing: -n would never be reached; give --duration"
    );
    let (code, err) = sim(&["-n", "1000", "--tap-miss", "c2s=100%,s2c=99.99%"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("nothing was captured in 60 s of simulated time"),
        "{err}"
    );
    // A count that can be reached is reached.
    let (code, err) = sim(&["-n", "500", "--tap-miss", "50%"]);
    assert_eq!(code, Some(0), "{err}");
}

/// A capture the simulator cannot write (`-w /dev/full`) is an error, for
/// every protocol's simulator. Regression: libpcap's dumper dropped what it
/// failed to write and the run exited 0.
#[test]
fn a_capture_that_cannot_be_written_is_an_error() {
    for proto in [
        "lwar",
        "starstrike",
        "battlegrounds",
        "vessel_fixed",
        "vessel",
    ] {
        let o = Command::cargo_bin("lwarscope")
            .unwrap()
            .args(["sim", "--proto", proto, "-w", "/dev/full", "--no-truth"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{proto}: {err}");
        assert_eq!(
            err.trim(),
            "error: /dev/full: cannot write the capture: No space left on device (os error 28)",
            "{proto}"
        );
    }
}

/// `--no-truth` skips writing the ground truth, not the faults: the summary
/// line counts them as the truth lists them (it said "0 faults").
#[test]
fn the_summary_counts_the_faults_with_or_without_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let faults = [
        "--loss",
        "5%",
        "--dup",
        "2%",
        "--tap-miss",
        "1%",
        "--noise",
        "1%",
    ];
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let o = Command::cargo_bin("lwarscope")
            .unwrap()
            .args(["sim", "-w", out.to_str().unwrap()])
            .args(faults)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success());
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let line = err.strip_prefix(out.to_str().unwrap()).unwrap().to_owned();
        (out, line)
    };
    let (with, line) = run("with.pcap", &[]);
    let (without, line_without) = run("without.pcap", &["--no-truth"]);
    assert_eq!(
        line,
        ": 641 frames (634 lwar), 57 faults, 8.594 s simulated\n"
    );
    assert_eq!(line_without, line);
    assert_eq!(
        std::fs::read(&with).unwrap(),
        std::fs::read(&without).unwrap()
    );
    assert!(!without.with_extension("truth.json").exists());
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(with.with_extension("truth.json")).unwrap()).unwrap();
    assert_eq!(truth["faults"].as_array().unwrap().len(), 57);
}
