//! Fleet runs: `check` and `-r` over directories and globs, `-j N` workers
//! giving exactly what one worker gives, a bad file among good ones, and the
//! options a fleet run refuses.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The corpus's captures, sorted by path as a fleet run lists them.
fn corpus() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("captures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
        .map(|n| format!("captures/{n}"))
        .collect();
    files.sort();
    files
}

#[test]
fn parallel_and_sequential_runs_give_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 5] = [
        &[
            "check",
            "captures/",
            "--deny",
            "lost,malformed",
            "--max",
            "resend-rate=5%",
        ],
        &["-r", "captures/"],
        &["-r", "captures/", "--format", "json"],
        &[
            "-r",
            "captures/",
            "--format",
            "jsonl",
            "-Y",
            "resend || lost",
        ],
        &[
            "-r",
            "captures/",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "lwarscope.session",
        ],
    ];
    for args in runs {
        let mut seen: Option<(Run, Vec<u8>)> = None;
        for jobs in ["1", "2", "5"] {
            let junit = dir.path().join(format!("junit-{jobs}.xml"));
            let mut all: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            all.extend(["-j".into(), jobs.into()]);
            if args[0] == "check" {
                all.extend(["--junit".into(), junit.clone().into()]);
            }
            let r = run(&all);
            // `check` of the corpus: bg-midsession.pcap, begun after the
            // handshake, holds no packet of a known protocol without its
            // `-d`: an error, whatever the number of workers.
            let codes: &[Option<i32>] = if args[0] == "check" {
                &[Some(2)]
            } else {
                &[Some(0), Some(1)]
            };
            assert!(
                codes.contains(&r.code),
                "{args:?} -j {jobs}: {:?} {}",
                r.code,
                r.stderr
            );
            assert!(!r.stdout.is_empty(), "{args:?} -j {jobs}");
            let xml = std::fs::read(&junit).unwrap_or_default();
            match &seen {
                None => seen = Some((r, xml)),
                Some((first, first_xml)) => {
                    assert_eq!(r.code, first.code, "{args:?} -j {jobs}");
                    assert!(
                        r.stdout == first.stdout,
                        "{args:?}: -j {jobs} differs from -j 1"
                    );
                    assert_eq!(r.stderr, first.stderr, "{args:?} -j {jobs}");
                    assert!(xml == *first_xml, "{args:?}: JUnit of -j {jobs} differs");
                }
            }
        }
    }
}

#[test]
fn a_directory_is_every_capture_under_it_in_path_order() {
    let r = run(&["check", "captures"]);
    let files: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|f| f.trim_end_matches(':'))
        .filter(|f| f.starts_with("captures/"))
        .collect();
    assert_eq!(files, corpus(), "{}", r.stdout);
    // Every file passes a run with no rules but the one begun after its
    // handshake, which holds no packet of a known protocol without its `-d`:
    // an error saying what to try, never a silent pass.
    let total = format!(
        "{} files: {} passed, 0 failed, 1 error\n",
        files.len(),
        files.len() - 1
    );
    assert!(r.stdout.ends_with(&total), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "\nERROR captures/bg-midsession.pcap: no packet of a known protocol among 224 UDP \
             datagrams; port 7777: 224 datagrams, 100 % decode as Battlegrounds: try -d \
             udp.port==7777,bg\n"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(r.code, Some(2), "{}", r.stdout);

    // The report: each file headed, in the same order, each its own analysis.
    let r = run(&["-r", "captures", "-j", "2"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let heads: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("==> ")?.strip_suffix(" <=="))
        .collect();
    assert_eq!(heads, corpus());
}

#[test]
fn a_glob_is_expanded_by_lwarscope_as_the_shell_would() {
    let quoted = run(&["check", "captures/sim-*.pcap", "--deny", "lost"]);
    let mut named: Vec<String> = corpus()
        .into_iter()
        .filter(|f| f.starts_with("captures/sim-") && f.ends_with(".pcap"))
        .collect();
    named.extend(["--deny".into(), "lost".into()]);
    let mut args = vec!["check".to_owned()];
    args.extend(named);
    let expanded = run(&args);
    assert_eq!(quoted.stdout, expanded.stdout);
    assert_eq!(quoted.code, expanded.code);
    // `**` goes through folders.
    let deep = run(&["check", "captures/**/sim-clean.pcap"]);
    assert!(
        deep.stdout.contains("PASS  captures/sim-clean.pcap"),
        "{}",
        deep.stdout
    );
}

/// A folder of two good captures, a file that is no capture, and a capture cut
/// off in the middle of a record.
fn mixed_folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("fleet");
    std::fs::create_dir(&d).unwrap();
    for f in ["sim-clean.pcap", "strs-clean.pcap"] {
        std::fs::copy(root().join("captures").join(f), d.join(f)).unwrap();
    }
    std::fs::write(d.join("bad.pcap"), b"this is not a capture file at all").unwrap();
    let whole = std::fs::read(root().join("captures/sim-loss.pcap")).unwrap();
    std::fs::write(d.join("cut.pcap"), &whole[..whole.len() / 2 + 7]).unwrap();
    (dir, d)
}

#[test]
fn a_bad_file_among_good_ones_is_reported_and_the_rest_still_analysed() {
    let (_keep, d) = mixed_folder();
    let junit = d.with_file_name("junit.xml");
    let r = run(&[
        "check".as_ref(),
        d.as_os_str(),
        "-j".as_ref(),
        "2".as_ref(),
        "--junit".as_ref(),
        junit.as_os_str(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", r.stdout);
    let name = |f: &str| d.join(f).display().to_string();
    assert!(
        lines[0].starts_with(&format!("ERROR {}: ", name("bad.pcap"))),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(&format!("ERROR {}: ", name("cut.pcap"))),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        format!("PASS  {} (0 rules)", name("sim-clean.pcap"))
    );
    assert_eq!(
        lines[3],
        format!("PASS  {} (0 rules)", name("strs-clean.pcap"))
    );
    assert_eq!(lines[4], "4 files: 2 passed, 0 failed, 2 errors");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let suites = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).unwrap();
    assert_eq!(suites.suites.len(), 4, "one test suite per file: {xml}");
    assert_eq!(suites.errors, 2, "{xml}");

    // The report: each failure on standard error in its turn, the others printed.
    let r = run(&[
        "-r".as_ref(),
        d.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let errors: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(errors.len(), 3, "{}", r.stderr);
    assert!(
        errors[0].starts_with(&format!("error: {}: ", name("bad.pcap"))),
        "{}",
        r.stderr
    );
    assert!(
        errors[1].starts_with(&format!("error: {}: ", name("cut.pcap"))),
        "{}",
        r.stderr
    );
    assert_eq!(
        errors[2],
        "error: 2 of 4 files could not be analysed (each is reported above)"
    );
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let captures = doc["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 4);
    assert_eq!(captures[0]["file"], name("bad.pcap"));
    assert!(captures[0]["error"].is_string());
    // A capture cut off gives what was read before the cut, as -r of it alone.
    assert!(captures[1]["capture"]["frames"].as_u64().unwrap() > 0);
    for (i, f) in [(2, "sim-clean.pcap"), (3, "strs-clean.pcap")] {
        assert_eq!(captures[i]["capture"]["files"][0], name(f));
        assert!(
            !captures[i]["summary"]["sessions"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn each_file_of_a_fleet_gives_what_it_gives_alone() {
    let r = run(&["-r", "captures/sim-*.pcap", "--format", "jsonl", "-j", "2"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let mut alone = String::new();
    for f in corpus().iter().filter(|f| f.starts_with("captures/sim-")) {
        alone.push_str(&run(&["-r", f, "--format", "jsonl"]).stdout);
    }
    assert!(r.stdout == alone, "a fleet's jsonl is each file's, in turn");
    // Without -j, a directory or a glob, named files are still one stream.
    let r = run(&[
        "-r",
        "captures/sim-clean.pcap",
        "captures/sim-loss.pcap",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["capture"]["files"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_fleet_options_are_one_line_errors() {
    for (args, why) in [
        (
            &["check", "captures/*.nothing"][..],
            "captures/*.nothing: no file matches this pattern",
        ),
        (
            &["-r", "captures/*.nothing"][..],
            "captures/*.nothing: no file matches this pattern",
        ),
        (&["check", "src/engine"][..], "no capture file"),
        (
            &["check", "captures/sim-clean.pcap", "-j", "0"][..],
            "number would be zero",
        ),
        (&["-r", "captures/", "-j", "0"][..], "number would be zero"),
        (
            &["-r", "captures/", "--format", "parquet"][..],
            "--format parquet needs --out DIR",
        ),
        (
            &["-r", "captures/", "--out", "x"][..],
            "--out applies to --format parquet",
        ),
        (
            &["-r", "captures/", "-w", "x.pcapng"][..],
            "-w exports from one stream",
        ),
        (&["-i", "lo", "-j", "2"][..], "-j applies to capture files"),
        (&["-r", "-", "-j", "2"][..], "standard input is one stream"),
        (
            &["-r", "captures/", "-Y", "seqno >="][..],
            "bad display filter",
        ),
    ] {
        let r = run(args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stdout);
        let first = r.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.contains(why),
            "{args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
    // Output options are checked once, not once per file.
    for (args, why) in [
        (&["-r", "captures/", "-q"][..], "-q leaves nothing to print"),
        (
            &["-r", "captures/", "-e", "frame.number"][..],
            "add -T fields",
        ),
        (
            &["-r", "captures/", "-T", "fields", "-e", "no.such.field"][..],
            "no.such.field",
        ),
    ] {
        let r = run(args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stdout);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{args:?}: {}", r.stderr);
    }
}
