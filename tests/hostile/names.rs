//! Hostile file names: a capture named with an OSC title change, a screen
//! clear, a newline that forges a verdict line, a C1 control or bytes that are
//! not UTF-8 is shown escaped (`\u{1b}`, `\n`, `\u{9b}`, U+FFFD) in `check`'s
//! verdict lines, the report's `files` row and every error message; the JUnit
//! file stays well-formed XML 1.0 and names each file escaped; JSON keeps the
//! name whole (serde escapes it).

use assert_cmd::Command;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&OsStr]) -> Run {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    let r = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    no_raw_control("stdout", &r.stdout);
    no_raw_control("stderr", &r.stderr);
    r
}

/// No control character but the newline ends a line: no C0, DEL or C1.
fn no_raw_control(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && c.is_control())
        .collect();
    assert!(bad.is_empty(), "raw controls {bad:?} in {what}: {text:?}");
}

const TITLE: &[u8] = b"a\x1b]0;title\x07.pcap";
const CLEAR: &[u8] = b"b\x1b[2J.pcap";
const FORGED: &[u8] = b"c\nPASS  k.pcap";
const C1: &[u8] = "d\u{9b}.pcap".as_bytes();
const NOT_UTF8: &[u8] = b"e\xff.pcap";
const NOT_PCAP: &[u8] = b"f\x1b[2J.pcap";

/// The names as text output shows them, in the order a folder lists them.
const SHOWN: [&str; 6] = [
    "a\\u{1b}]0;title\\u{7}.pcap",
    "b\\u{1b}[2J.pcap",
    "c\\nPASS  k.pcap",
    "d\\u{9b}.pcap",
    "e\u{fffd}.pcap",
    "f\\u{1b}[2J.pcap",
];

/// A folder of five good captures with hostile names and one file with such
/// a name that is no capture.
fn folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("names");
    std::fs::create_dir(&d).unwrap();
    let good = root().join("captures/sim-clean.pcap");
    for n in [TITLE, CLEAR, FORGED, C1, NOT_UTF8] {
        std::fs::copy(&good, d.join(OsStr::from_bytes(n))).unwrap();
    }
    std::fs::write(d.join(OsStr::from_bytes(NOT_PCAP)), b"no capture at all").unwrap();
    (dir, d)
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn check_shows_each_name_escaped_on_one_verdict_line() {
    let (_keep, d) = folder();
    let dir = d.display().to_string();
    let r = run(&[os("check"), d.as_os_str(), os("--deny"), os("malformed")]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        7,
        "one verdict line per file, and the total: {}",
        r.stdout
    );
    for (line, shown) in lines.iter().zip(&SHOWN[..5]) {
        assert_eq!(*line, format!("PASS  {dir}/{shown} (1 rule): malformed 0"));
    }
    assert_eq!(
        lines[5],
        format!(
            "ERROR {dir}/{}: not a pcap or pcapng file (unknown file format)",
            SHOWN[5]
        )
    );
    assert_eq!(lines[6], "6 files: 5 passed, 0 failed, 1 error");
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("PASS  k.pcap")),
        "no forged line: {}",
        r.stdout
    );
}

#[test]
fn check_json_keeps_names_whole() {
    let (_keep, d) = folder();
    let r = run(&[os("check"), d.as_os_str(), os("--format"), os("json")]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let files: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    let want: Vec<String> = [TITLE, CLEAR, FORGED, C1, NOT_UTF8, NOT_PCAP]
        .iter()
        .map(|n| d.join(OsStr::from_bytes(n)).to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, want);
}

#[test]
fn junit_is_well_formed_and_names_each_file_escaped() {
    let (keep, d) = folder();
    let junit = keep.path().join("junit.xml");
    let r = run(&[
        os("check"),
        d.as_os_str(),
        os("--deny"),
        os("malformed"),
        os("--junit"),
        junit.as_os_str(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    // XML 1.0 allows of the C0 controls only tab, newline and carriage return.
    let forbidden: Vec<char> = (xml.chars())
        .filter(|&c| {
            c < ' ' && !matches!(c, '\t' | '\n' | '\r') || c == '\u{fffe}' || c == '\u{ffff}'
        })
        .collect();
    assert!(forbidden.is_empty(), "{forbidden:?} in {xml}");
    let suites = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).unwrap();
    let dir = d.display().to_string();
    let names: Vec<&str> = suites.suites.iter().map(|s| s.name.as_str()).collect();
    let want: Vec<String> = SHOWN.iter().map(|s| format!("{dir}/{s}")).collect();
    assert_eq!(names, want);
    let cases: Vec<&str> = (suites.suites.iter())
        .flat_map(|s| s.cases.iter().map(|c| c.name.as_str()))
        .collect();
    let want_cases: Vec<String> = (want.iter().enumerate())
        .map(|(i, n)| match i {
            5 => format!("{n}::read capture"),
            _ => format!("{n}::deny malformed"),
        })
        .collect();
    assert_eq!(cases, want_cases);
    assert_eq!(suites.errors, 1);
}

#[test]
fn the_report_and_its_errors_show_names_escaped() {
    let (_keep, d) = folder();
    let dir = d.display().to_string();
    // The capture table's `files` row.
    let title = d.join(OsStr::from_bytes(TITLE));
    let r = run(&[os("-r"), title.as_os_str()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("{dir}/{}", SHOWN[0])),
        "{}",
        r.stdout
    );
    let forged = d.join(OsStr::from_bytes(FORGED));
    let r = run(&[os("-r"), forged.as_os_str()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains(SHOWN[2]), "{}", r.stdout);
    // One file that is no capture: main's `error:` line.
    let bad = d.join(OsStr::from_bytes(NOT_PCAP));
    let r = run(&[os("-r"), bad.as_os_str()]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stderr.trim_end(),
        format!(
            "error: {dir}/{}: not a pcap or pcapng file (unknown file format)",
            SHOWN[5]
        )
    );
    // A folder: each file's report under its escaped name, the bad one's
    // error on standard error.
    let r = run(&[os("-r"), d.as_os_str()]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for shown in &SHOWN[..5] {
        assert!(
            r.stdout.contains(&format!("==> {dir}/{shown} <==")),
            "{shown}: {}",
            r.stdout
        );
    }
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(
        errors[0],
        format!(
            "error: {dir}/{}: not a pcap or pcapng file (unknown file format)",
            SHOWN[5]
        )
    );
    // A folder with no capture in it, named with a screen clear.
    let empty = d.join(OsStr::from_bytes(b"g\x1b[2J"));
    std::fs::create_dir(&empty).unwrap();
    let r = run(&[os("check"), empty.as_os_str()]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains(&format!("error: {dir}/g\\u{{1b}}[2J: no capture file")),
        "{}",
        r.stderr
    );
}
