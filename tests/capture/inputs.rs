//! Reading what people have: gzip and zstd compressed captures, and several
//! files merged by time (`--merge`, as mergecap) or read one after the other.

use crate::common;
use crate::program;

use common::lwarscope;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Standard output and error of a run, with its exit code.
fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = lwarscope()
        .timeout(Duration::from_secs(60))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

const LOSS: &str = "captures/sim-loss.pcap";

fn compressed(dir: &Path, name: &str, how: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    let f = std::fs::File::create(&path).unwrap();
    match how {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(f, flate2::Compression::default());
            e.write_all(bytes).unwrap();
            e.finish().unwrap();
        }
        "zstd" => {
            let mut e = zstd::stream::write::Encoder::new(f, 3).unwrap();
            e.write_all(bytes).unwrap();
            e.finish().unwrap();
        }
        _ => unreachable!(),
    }
    path
}

/// The JSON report with the file names left out: what must not depend on
/// how the bytes were stored.
fn report_without_names(file: &str) -> serde_json::Value {
    let (out, err, code) = run(&["-r", file, "--format", "json", "--packets"]);
    assert_eq!(code, Some(0), "{file}: {err}");
    let mut doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    doc["capture"]["files"] = serde_json::Value::Null;
    doc
}

#[test]
fn compressed_captures_read_as_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(root().join(LOSS)).unwrap();
    let pcapng = std::fs::read(root().join("captures/live-loopback.pcap")).unwrap();
    let want = report_without_names(LOSS);
    for how in ["gzip", "zstd"] {
        // Named without a suffix: the magic bytes tell, not the name.
        let path = compressed(dir.path(), &format!("loss-{how}"), how, &plain);
        let got = report_without_names(path.to_str().unwrap());
        assert_eq!(got, want, "{how}");
        let path = compressed(dir.path(), &format!("live.{how}"), how, &pcapng);
        let got = report_without_names(path.to_str().unwrap());
        assert_eq!(got, report_without_names("captures/live-loopback.pcap"));
    }
}

#[test]
fn a_corrupt_compressed_capture_says_why_after_the_results_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(root().join(LOSS)).unwrap();
    let whole = compressed(dir.path(), "whole.gz", "gzip", &plain);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.pcap.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let (out, err, code) = run(&["-r", cut.to_str().unwrap(), "-q", "-z", "io,stat,0"]);
    assert_eq!(code, Some(2));
    assert!(out.contains("IO statistics"), "the results so far: {out}");
    assert!(
        err.contains("cut.pcap.gz: read error after") && err.contains("gzip: "),
        "{err}"
    );
    // Compressed bytes that are not a capture.
    let text = compressed(dir.path(), "notes.gz", "zstd", b"not a capture at all\n");
    let (out, err, code) = run(&["-r", text.to_str().unwrap()]);
    assert_eq!((out.as_str(), code), ("", Some(2)));
    assert!(err.contains("inside zstd compression"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// Issue 36: a small zstd capture cut short said "not a pcap or pcapng
/// file": zstd decodes a block whole (up to 128 KiB), so a cut inside the
/// first block leaves nothing to decode, and the file is a capture cut
/// short, not another kind of file. It reads as a compressed capture cut
/// later does, "read error after 0 packets", exit 2; one cut after its
/// first block gives the packets before the cut, then the same error.
#[test]
fn a_small_zstd_capture_cut_short_is_a_cut_capture() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(root().join(LOSS)).unwrap();
    assert!(plain.len() < 128 << 10, "one zstd block");
    let whole = compressed(dir.path(), "whole.zst", "zstd", &plain);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.pcap.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (out, err, code) = run(&["-r", cut.to_str().unwrap()]);
    assert_eq!((out.as_str(), code), ("", Some(2)));
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {}: read error after 0 packets: zstd: incomplete frame (cut off or damaged \
             inside its first compressed block: nothing before the cut can be decoded)",
            cut.display()
        )
    );
    // Over 128 KiB: a cut in its last block gives the first's packets.
    let mut two = plain.clone();
    while two.len() < 200 << 10 {
        two.extend_from_slice(&plain[24..]);
    }
    let whole = compressed(dir.path(), "two.zst", "zstd", &two);
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 8]).unwrap();
    let (out, err, code) = run(&["-r", cut.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(2));
    let frames = serde_json::from_str::<serde_json::Value>(&out).unwrap()["capture"]["frames"]
        .as_u64()
        .unwrap();
    assert!(frames > 0, "{err}");
    assert!(
        err.contains(&format!(
            "read error after {frames} packets: zstd: incomplete frame"
        )),
        "{err}"
    );
}

#[test]
fn stopping_early_does_not_wait_for_the_inflater() {
    // -c stops after a few packets; the inflating thread must not block the
    // exit (the command's 60 s timeout would fail the test).
    let dir = tempfile::tempdir().unwrap();
    let mut big = Vec::new();
    let plain = std::fs::read(root().join(LOSS)).unwrap();
    big.extend_from_slice(&plain);
    let path = compressed(dir.path(), "big.pcap.zst", "zstd", &big);
    let (out, _, code) = run(&["-r", path.to_str().unwrap(), "-c", "3", "--packets"]);
    assert_eq!(code, Some(0));
    assert_eq!(out.lines().count(), 3);
}

/// Splits the loss capture into its two directions, as two files.
fn split(dir: &Path) -> (String, String) {
    let mut names = Vec::new();
    for d in ["c2s", "s2c"] {
        let path = dir.join(format!("{d}.pcapng"));
        let p = path.to_str().unwrap().to_owned();
        let (_, err, code) = run(&["-r", LOSS, "-Y", &format!("dir == {d}"), "-w", &p, "-q"]);
        assert_eq!(code, Some(0), "{err}");
        names.push(p);
    }
    (names.remove(0), names.remove(0))
}

#[test]
fn merge_reads_files_in_time_order_as_mergecap() {
    let dir = tempfile::tempdir().unwrap();
    let (c2s, s2c) = split(dir.path());
    let merged = dir.path().join("merged.pcapng");
    // Not skipped when mergecap is missing: CI installs it with tshark.
    let status = program::program("mergecap")
        .args(["-w", merged.to_str().unwrap(), &c2s, &s2c])
        .status()
        .expect("mergecap is installed (.ci/run installs tshark and its tools)");
    assert!(status.success());
    let fields = [
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "frame.time_epoch",
        "-e",
        "ip.src",
        "-e",
        "lwar.seqno",
    ];
    let mut ours = vec!["-r", &c2s, &s2c, "--merge"];
    ours.extend(fields);
    let mut theirs = vec!["-r", merged.to_str().unwrap()];
    theirs.extend(fields);
    let (a, err, _) = run(&ours);
    assert!(err.is_empty(), "no warning with --merge: {err}");
    let (b, _, _) = run(&theirs);
    assert_eq!(a.lines().count(), 899);
    assert_eq!(a, b);
    // The merged analysis is the original capture's.
    let (m, _, _) = run(&["-r", &c2s, &s2c, "--merge", "--format", "json"]);
    let (o, _, _) = run(&["-r", LOSS, "--format", "json"]);
    let summary =
        |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap()["summary"].clone();
    assert_eq!(summary(&m), summary(&o));
}

#[test]
fn without_merge_time_going_backwards_between_files_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (c2s, s2c) = split(dir.path());
    let (out, err, code) = run(&["-r", &c2s, &s2c, "-q", "-z", "io,stat,0"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("IO statistics"));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("warning: ")
            && err.contains("s2c.pcapng starts 7.530 s before")
            && err.contains("--merge"),
        "{err}"
    );
    // In order, no warning.
    let (_, err, _) = run(&["-r", LOSS, LOSS, "-q", "-z", "io,stat,0"]);
    assert!(
        err.contains("starts 7.532 s before"),
        "the same file twice overlaps: {err}"
    );
    let (_, err, _) = run(&["-r", LOSS, "-q", "-z", "io,stat,0"]);
    assert!(err.is_empty());
}

#[test]
fn merge_applies_to_files_only() {
    let (_, err, code) = run(&["-i", "lo", "--merge"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--merge"), "{err}");
}
