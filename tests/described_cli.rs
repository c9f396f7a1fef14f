//! Described protocols from the command line: their fields are listed, `-X
//! proto:FILE` loads one (usable with `-d` and `-Y`), and a bad file stops the
//! run with one line naming file, line and column, and exit code 2.

mod common;

use common::lwarscope;
use std::path::Path;

#[test]
fn list_fields_lists_the_described_fields() {
    let out = lwarscope().arg("--list-fields").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for name in [
        "vessel_fixed.sync_number",
        "vessel_fixed.body.input.throttle_left",
        "timewarp.body.ships.angle",
        "strs_ksy.sequence_number",
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} missing"
        );
    }
}

#[test]
fn a_loaded_description_decodes_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.ksy");
    // Vessel's datagrams read by a description of the first six bytes.
    std::fs::write(
        &file,
        "meta:\n  id: mine\nseq:\n  - id: len\n    type: u1\n  - id: version\n    type: str\n    size: len\n  - id: kind\n    type: u1\n  - id: sync\n    type: u1\n  - id: rest\n    size-eos: true\n-lwarscope:\n  recognise:\n    port: 7600\n  sequence:\n    field: sync\n    recency:\n      ahead: 128\n",
    )
    .unwrap();
    let out = lwarscope()
        .arg("-X")
        .arg(format!("proto:{}", file.display()))
        .args([
            "-r",
            "captures/ksy-vessel-faults.pcap",
            "-d",
            "udp.port==7600,mine",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "mine.sync",
            "-Y",
            "mine.sync == 0",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // Both directions wrap to 0 once.
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| l.ends_with("\t0")), "{text}");
}

#[test]
fn a_bad_description_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.ksy");
    std::fs::write(
        &file,
        "meta:\n  id: bad\nseq:\n  - id: a\n    type: u1\n    repeat: until\n",
    )
    .unwrap();
    let out = lwarscope()
        .arg(format!("-Xproto:{}", file.display()))
        .arg("--list-fields")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ")
            && err.contains("bad.ksy:6:13: `repeat: until` is not supported"),
        "{err}"
    );
    let out = lwarscope()
        .args(["-X", "proto:/no/such.ksy", "--list-fields"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: /no/such.ksy: "), "{err}");
    let out = lwarscope()
        .args(["-X", "nonsense", "--list-fields"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sim_writes_the_scripted_captures_of_the_example_layouts() {
    let dir = tempfile::tempdir().unwrap();
    for (proto, stem) in [
        ("vessel_fixed", "ksy-vessel-faults"),
        ("timewarp", "ksy-timewarp-faults"),
    ] {
        let out = dir.path().join(format!("{stem}.pcap"));
        let run = lwarscope()
            .args(["sim", "--proto", proto, "-w"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(corpus.join(format!("{stem}.pcap"))).unwrap(),
            "{proto}"
        );
        assert_eq!(
            std::fs::read(out.with_extension("truth.json")).unwrap(),
            std::fs::read(corpus.join(format!("{stem}.truth.json"))).unwrap(),
            "{proto}"
        );
    }
    let refused = lwarscope()
        .args(["sim", "--proto", "vessel_fixed", "--dup", "5%", "-w"])
        .arg(dir.path().join("x.pcap"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--dup is not simulated for Vessel"));
}
