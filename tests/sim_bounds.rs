//! `lwarscope sim -w F -n N` ends even when nothing can be captured: refused at
//! once for a tap that misses everything, an error after 60 s of simulated time
//! without a capture otherwise (it used to run forever, growing ~170 MB/s).

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
