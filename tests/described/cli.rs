//! Described protocols from the command line: their fields are listed, `-X
//! proto:FILE` loads one (usable with `-d` and `-Y`), and a bad file stops the
//! run with one line naming file, line and column, and exit code 2.

use crate::common;

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

#[test]
fn a_hostile_description_is_refused_at_its_place_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f
    };
    let refused = |file: &Path, args: &[&str], says: &str| {
        let t = std::time::Instant::now();
        let out = lwarscope()
            .arg(format!("-Xproto:{}", file.display()))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err,
            format!("error: {}:{says}\n", file.display()),
            "{args:?}"
        );
        assert!(t.elapsed().as_secs() < 10, "{args:?}: {:?}", t.elapsed());
    };
    // 50 000 block lists nested in a `doc-ref:` (100 KB): a stack overflow
    // in the YAML parser before (SIGABRT, exit 134).
    let deep = write(
        "deep.ksy",
        format!(
            "meta:\n  id: deep\n  doc-ref:\n    {}1\n",
            "- ".repeat(50_000)
        ),
    );
    let says = "4:65: mappings and lists nested more than 32 deep: a description needs far fewer";
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/ksy-vessel-faults.pcap");
    let capture = capture.to_str().unwrap();
    refused(&deep, &["--list-fields"], says);
    refused(&deep, &["-r", capture], says);
    refused(&deep, &["check", capture], says);
    // An enum of 100 000 values (1.8 MB): 48.7 s before; refused at the key
    // past 65 536.
    let enums = |n: usize| {
        let values: String = (0..n).map(|i| format!("    {i}: v{i}\n")).collect();
        format!(
            "meta:\n  id: big\n  endian: be\nseq:\n  - id: t\n    type: u2\n    enum: e\nenums:\n  e:\n{values}-lwarscope:\n  recognise:\n    port: 9999\n"
        )
    };
    let big = write("big.ksy", enums(100_000));
    let says =
        "65546:5: a mapping of more than 65536 keys: split it (an enum lists at most 65536 values)";
    refused(&big, &["--list-fields"], says);
    // Every 16-bit value: loads.
    let all = write("all.ksy", enums(65_536));
    let t = std::time::Instant::now();
    let out = lwarscope()
        .arg(format!("-Xproto:{}", all.display()))
        .arg("--list-fields")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("big.t"));
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
}

#[test]
fn a_valid_violation_is_on_the_bad_packet_for_filters_and_exports() {
    // Frame 241 of the Vessel capture holds a throttle of 1.5 (`valid`: at
    // most 1); frame 243, the vessel's next packet, is good. The finding was
    // raised with 243, which `-Y violation` printed and `-w` exported.
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/ksy-vessel-faults.pcap");
    let out = lwarscope()
        .arg("-r")
        .arg(&capture)
        .args(["-Y", "violation"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("   241 "), "{text}");
    assert!(text.contains("[violation/valid vessel_input]"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("bad.pcap");
    let out = lwarscope()
        .arg("-r")
        .arg(&capture)
        .args(["-Y", "violation", "-w"])
        .arg(&export)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The one frame exported is frame 241's datagram: its line, renumbered.
    let out = lwarscope()
        .arg("-r")
        .arg(&export)
        .arg("--packets")
        .output()
        .unwrap();
    let exported = String::from_utf8(out.stdout).unwrap();
    assert_eq!(exported.lines().count(), 1, "{exported}");
    let tail = |l: &str| l.split_once(" 10.0.2.1").map(|x| x.1.to_owned());
    let line_of_241 = text.lines().next().unwrap();
    assert_eq!(
        tail(exported.lines().next().unwrap()).map(|t| t.split(" [").next().unwrap().to_owned()),
        tail(line_of_241).map(|t| t.split(" [").next().unwrap().to_owned())
    );
}

#[test]
fn a_descriptions_strings_reach_no_output_raw() {
    // A title and a doc holding an OSC title change, a screen clear, a
    // carriage return before a fake verdict, and C1 controls (YAML escapes).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evil.ksy");
    std::fs::write(
        &file,
        concat!(
            "meta:\n  id: evil\n",
            "seq:\n  - id: a\n    type: u1\n",
            "    doc: \"\\e]0;pwned\\a\\e[2J\\rALL CLEAN\\x9b2J\\N\"\n",
            "-lwarscope:\n  title: \"Evil\\e]0;pwned\\a\\e[2J\\rALL CLEAN\\x9b\"\n",
            "  recognise:\n    port: 7600\n  trailing: allow\n",
        ),
    )
    .unwrap();
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/ksy-vessel-faults.pcap");
    let raw = |text: &str| {
        text.chars()
            .filter(|c| c.is_control() && *c != '\n')
            .collect::<Vec<_>>()
    };
    let run = |args: &[&std::ffi::OsStr]| {
        let out = lwarscope()
            .arg(format!("-Xproto:{}", file.display()))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let fields = run(&["--list-fields".as_ref()]);
    let line = fields.lines().find(|l| l.starts_with("evil.a ")).unwrap();
    assert_eq!(raw(&fields), [], "{line}");
    // (The carriage return and NEL are whitespace: a doc's runs of
    // whitespace are one space.)
    assert!(
        line.ends_with(r"\u{1b}]0;pwned\u{7}\u{1b}[2J ALL CLEAN\u{9b}2J (u1)"),
        "{line}"
    );
    let report = run(&[
        "-r".as_ref(),
        capture.as_os_str(),
        "-d".as_ref(),
        "udp.port==7600,evil".as_ref(),
    ]);
    assert_eq!(raw(&report), [], "{report}");
    assert!(
        report.contains(r"Evil\u{1b}]0;pwned\u{7}\u{1b}[2J\rALL"),
        "{report}"
    );
    // JSON: valid, and no C1 control raw.
    let json = run(&[
        "-r".as_ref(),
        capture.as_os_str(),
        "-d".as_ref(),
        "udp.port==7600,evil".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(raw(&json), []);
    serde_json::from_str::<serde_json::Value>(&json).unwrap();
}

#[test]
fn a_description_file_over_16_mib_is_refused_before_it_is_read() {
    // 200 MB of top-level doc loaded at 795 MB of memory; a file past
    // 16 MiB (here 17 MiB of comment) is refused as it is read.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.ksy");
    let mut text = String::from("meta:\n  id: huge\n");
    text.push_str(&format!("# {}\n", "x".repeat(17 << 20)));
    std::fs::write(&file, text).unwrap();
    let out = lwarscope()
        .arg(format!("-Xproto:{}", file.display()))
        .arg("--list-fields")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: {}: larger than 16 MiB: not a description\n",
            file.display()
        )
    );
}

/// A magic is a field of the described compiler's own kind (`contents`),
/// not one whose doc ends in `(contents)`, and reads the same in every view:
/// one of up to 8 bytes is a number (`0x…`), a longer one its bytes, in `-V`
/// as in `-T fields`. Before, `-V` alone wrote a long magic after `0x`, having
/// recognised it by its doc.
#[test]
fn a_long_magic_reads_the_same_in_every_view() {
    use lwarscope::capture::LinkType;
    use lwarscope::capture::synth::{Link, udp_frame};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.ksy");
    std::fs::write(
        &file,
        "meta:\n  id: long\nseq:\n  - id: magic\n    contents: [0x4c, 0x4f, 0x4e, 0x47, 0x4d, 0x41, 0x47, 0x49, 0x43, 0x21]\n  - id: short\n    contents: [0x00, 0x2a]\n  - id: sync\n    type: u1\n-lwarscope:\n  recognise:\n    port: 7654\n",
    )
    .unwrap();
    let pcap = dir.path().join("long.pcap");
    let payload = b"LONGMAGIC!\x00\x2a\x07";
    let frame = udp_frame(
        Link::Ethernet,
        "10.0.0.1:40000".parse().unwrap(),
        "10.0.0.2:7654".parse().unwrap(),
        payload,
    );
    common::write_pcap(&pcap, LinkType::Ethernet, &[common::Fx::whole(0, frame)]);
    let run = |args: &[&str]| {
        let out = lwarscope()
            .arg(format!("-Xproto:{}", file.display()))
            .arg("-r")
            .arg(&pcap)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        run(&["-T", "fields", "-e", "long.magic", "-e", "long.short"]),
        "4c4f4e474d4147494321\t0x2a\n"
    );
    let tree = run(&["-V"]);
    let value = |label: &str| {
        tree.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} in {tree}"))
            .to_owned()
    };
    assert_eq!(value("magic: "), "4c4f4e474d4147494321");
    assert_eq!(value("short: "), "0x2a");
}
