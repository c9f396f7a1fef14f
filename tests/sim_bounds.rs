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
