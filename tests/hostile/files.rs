//! Hostile files and folders: captures that change while they are read,
//! folders holding what is not a regular file, names made to fool a terminal.
//! Each input is built here; nothing large is written (the big capture is a
//! sparse file).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("lwarscope"))
}

/// A classic pcap header (little-endian, microseconds, Ethernet).
fn pcap_header() -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&65535u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v
}

/// Waits for `child` at most `limit`, killing it past that.
fn wait_for(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `lwarscope ARGS` with its outputs piped, waiting at most a minute (a
/// run that waits on a FIFO fails the test instead of hanging it).
fn run_bounded(args: &[&std::ffi::OsStr]) -> Output {
    let child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(child, Duration::from_secs(60))
}

/// A capture truncated by another process while `check DIR` reads it (as
/// tcpdump's `-C`/`-W` ring reopens a file) is an `ERROR ... changed while
/// being read`, and the other files of the folder are still judged, the JUnit
/// file written: the process is not killed by SIGBUS (exit 135).
#[test]
fn a_capture_truncated_while_read_is_an_error_and_the_others_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("nightly");
    std::fs::create_dir(&folder).unwrap();
    // 2 GiB of empty records (zero bytes read as records of length 0),
    // sparse: no disk is used, and reading it takes seconds.
    let big = folder.join("a-ring.pcap");
    std::fs::write(&big, pcap_header()).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    std::fs::copy(corpus.join("sim-clean.pcap"), folder.join("b.pcap")).unwrap();
    let junit = dir.path().join("junit.xml");
    let child = bin()
        .arg("check")
        .arg(&folder)
        .args(["--deny", "malformed", "-j", "1", "--junit"])
        .arg(&junit)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Truncated once the reader has it mapped (its maps name the file).
    let maps = format!("/proc/{}/maps", child.id());
    let start = Instant::now();
    while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains("a-ring.pcap")) {
        assert!(start.elapsed() < Duration::from_secs(60), "never mapped");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let out = wait_for(child, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let a = big.display().to_string();
    assert!(
        lines[0].starts_with(&format!(
            "ERROR {a}: changed while being read (now 1048576 bytes, after "
        )),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("packets; the file was truncated or rewritten by another process)"));
    assert_eq!(
        lines[1],
        format!(
            "PASS  {} (1 rule): malformed 0",
            folder.join("b.pcap").display()
        )
    );
    assert_eq!(lines[2], "2 files: 1 passed, 0 failed, 1 error");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("errors=\"1\""), "{xml}");
    assert!(xml.contains("changed while being read"), "{xml}");
}

/// A FIFO in a capture folder would hold `check DIR` and `-r DIR` until
/// someone wrote to it (until a CI job's timeout): a walk or a glob takes
/// regular files, and a FIFO it finds is an `ERROR` verdict at once, the files
/// after it judged. A FIFO named on its own is still read, as a stream.
#[test]
fn a_fifo_in_a_folder_is_an_error_not_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("nightly");
    std::fs::create_dir(&folder).unwrap();
    let fifo = folder.join("a.pcap");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    std::fs::copy(corpus.join("sim-clean.pcap"), folder.join("b.pcap")).unwrap();
    let why = "not a regular file (a FIFO): not read in a folder walk or a glob, which would wait for a writer; name it on its own to read it as a stream";

    for walk in [folder.clone(), folder.join("*.pcap")] {
        let out = run_bounded(&[
            "check".as_ref(),
            walk.as_os_str(),
            "--deny".as_ref(),
            "malformed".as_ref(),
        ]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "ERROR {}: {why}\nPASS  {} (1 rule): malformed 0\n2 files: 1 passed, 0 failed, 1 error\n",
                fifo.display(),
                folder.join("b.pcap").display()
            )
        );
    }

    let out = run_bounded(&[
        "-r".as_ref(),
        folder.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next(),
        Some(format!("error: {}: {why}", fifo.display()).as_str())
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["captures"].as_array().unwrap().len(), 2);

    // Named on its own, the FIFO is a stream: read once a writer comes.
    let writer = {
        let fifo = fifo.clone();
        let bytes = std::fs::read(corpus.join("sim-clean.pcap")).unwrap();
        std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
    };
    let out = bin()
        .arg("-r")
        .arg(&fifo)
        .args(["--format", "json"])
        .output()
        .unwrap();
    writer.join().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["capture"]["frames"], 483);
}

/// SIGINT, SIGTERM or SIGHUP while files are read: the run was cut short, and
/// every output says so (the report's capture table, `"interrupted": true`
/// in JSON and in JSON Lines' summary, a comment in the pcapng export), with
/// the exit status 128 + the signal (130, 143, 129). Before: a well-formed
/// report of the frames read so far, with exit 0.
#[test]
fn a_run_stopped_by_a_signal_says_so_and_exits_non_zero() {
    use std::io::Write;
    let capture =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/sim-clean.pcap"))
            .unwrap();
    for (signal, name, format) in [
        (libc::SIGINT, "SIGINT", "json"),
        (libc::SIGTERM, "SIGTERM", "jsonl"),
        (libc::SIGHUP, "SIGHUP", "table"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("part.pcapng");
        // Into a file: a pipe nobody reads while the test waits would block it.
        let printed = dir.path().join("out");
        let mut child = bin()
            .args(["-r", "-", "--format", format, "-w"])
            .arg(&export)
            .stdin(Stdio::piped())
            .stdout(std::fs::File::create(&printed).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Half the capture, and standard input left open: the run waits.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&capture[..capture.len() / 2]).unwrap();
        stdin.flush().unwrap();
        let start = Instant::now();
        while !export.exists() {
            assert!(start.elapsed() < Duration::from_secs(60));
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = wait_for(child, Duration::from_secs(60));
        drop(stdin);
        let stdout = std::fs::read_to_string(&printed).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + signal), "{name}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "lwarscope: interrupted by {name} after frame 234: the results cover only the frames read\n"
            )
        );
        match format {
            "json" => {
                let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(doc["capture"]["interrupted"], true);
                assert_eq!(doc["capture"]["interrupted_by"], name);
                assert_eq!(doc["capture"]["frames"], 234);
            }
            "jsonl" => {
                let last: serde_json::Value =
                    serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
                assert_eq!(last["type"], "summary");
                assert_eq!(last["capture"]["interrupted"], true);
                assert_eq!(last["capture"]["interrupted_by"], name);
            }
            _ => assert!(
                stdout.contains(&format!("│ interrupted             ┆ by {name} after frame 234: the files were not read to their end")),
                "{stdout}"
            ),
        }
        let exported = std::fs::read(&export).unwrap();
        let note = format!(
            "lwarscope: interrupted by {name} after frame 234: the files were not read to their end"
        );
        assert!(
            exported.windows(note.len()).any(|w| w == note.as_bytes()),
            "no note in the export"
        );
        // The export is still a capture of the 234 frames read.
        let back = bin()
            .arg("-r")
            .arg(&export)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(back.status.code(), Some(0));
        let doc: serde_json::Value = serde_json::from_slice(&back.stdout).unwrap();
        assert_eq!(doc["capture"]["frames"], 234);
    }
}

/// `-w` with printed output whose reader goes away (`| head -1`): the export
/// has nothing to do with the pipe and is finished, every frame in it.
/// Before: 1 390 of 2 000 000 frames, exit 0 without a word.
#[test]
fn an_export_is_finished_when_the_printed_output_closes() {
    use std::io::BufRead;
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let files: Vec<_> = [
        "sim-loss.pcap",
        "sim-reorder.pcap",
        "sim-dup.pcap",
        "sim-eight.pcap",
    ]
    .iter()
    .map(|f| corpus.join(f))
    .collect();
    let whole = bin()
        .arg("-r")
        .args(&files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&whole.stdout).unwrap();
    let frames = doc["capture"]["frames"].as_u64().unwrap();
    assert!(frames > 4000, "{frames}");
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("all.pcapng");
    let mut child = bin()
        .arg("-r")
        .args(&files)
        .args(["--packets", "-w"])
        .arg(&export)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // The reader is gone after one line, as with `| head -1`.
    assert!(line.starts_with("     1 "), "{line}");
    let out = wait_for(child, Duration::from_secs(120));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back = bin()
        .arg("-r")
        .arg(&export)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(doc["capture"]["frames"].as_u64(), Some(frames));
}
