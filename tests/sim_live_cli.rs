//! `sim --proto NAME --live`: a protocol's simulated game replayed on loopback
//! in real time, captured live and recognised as that protocol. Runs as root in
//! CI (live capture on `lo`), failing rather than skipping without it.

use assert_cmd::Command;
use lwarscope::capture::{FrameClass, LiveOptions, Source};
use std::time::Duration;

fn live_sim_is_captured_as(proto: &str, port: u16, name: &str) {
    let mut opts = LiveOptions::new("lo");
    opts.filter = Some(format!("udp port {port}"));
    let mut source = Source::live(&opts).unwrap_or_else(|e| {
        panic!("live capture on lo must work here (run the tests as root): {e}")
    });
    source.stop_after(Duration::from_secs(8));
    let stop = source.stop_handle();
    let reader = std::thread::spawn(move || {
        let mut engine = lwarscope::proto::engine(Default::default());
        while let Some(frame) = source.next_frame().expect("live read") {
            if let FrameClass::Udp(d) = frame.class {
                engine.observe(&d, &mut ());
            }
        }
        engine.finish(&mut ());
        let mut names = Vec::new();
        engine.for_each_session(|s| names.push(s.protocol.name));
        (engine.recognised(), names)
    });
    std::thread::sleep(Duration::from_millis(300));
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["sim", "--proto", proto, "--live", "-d", "1", "-c", "2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let sent: u64 = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("replay: ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{stderr}"));
    std::thread::sleep(Duration::from_millis(300));
    stop.stop();
    let (recognised, names) = reader.join().unwrap();
    assert!(sent > 20, "{stderr}");
    assert_eq!(
        recognised, sent,
        "every replayed datagram captured and recognised"
    );
    assert!(
        !names.is_empty() && names.iter().all(|n| *n == name),
        "{names:?}"
    );
}

/// One after the other: both servers take port 7777.
#[test]
fn games_simulated_live_are_captured_as_their_protocol() {
    live_sim_is_captured_as("starstrike", 7777, "strs");
    live_sim_is_captured_as("battlegrounds", 7777, "bg");
}

#[test]
fn options_a_simulator_cannot_model_are_refused_by_name() {
    Command::cargo_bin("lwarscope")
        .unwrap()
        .args([
            "sim",
            "--proto",
            "battlegrounds",
            "-w",
            "/tmp/x.pcap",
            "--tap-miss",
            "1%",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--tap-miss is not simulated for Battlegrounds",
        ));
    Command::cargo_bin("lwarscope")
        .unwrap()
        .args([
            "sim",
            "--proto",
            "starstrike",
            "-w",
            "/tmp/x.pcap",
            "--crash",
            "1",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--crash is not simulated for Starstrike",
        ));
    Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["sim", "--proto", "quake", "-w", "/tmp/x.pcap"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown protocol"));
}
