//! Reading from a stream whose writer stalls (a pipe, a FIFO): the first
//! SIGINT or SIGTERM stops the run, and the results of what was read are
//! printed, saying that the run was interrupted (the capture table's
//! `interrupted` row, a line on standard error, exit status 128 + the
//! signal: a stopped run must not look like a finished one, issue 36).
//! Real processes, real signals.
//! Regression: the read blocked in the kernel, the first signal did nothing
//! and the second killed the run with its output; and `-r FIFO` did not read
//! at all (sniffing the compression consumed the first bytes).

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn capture() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/sim-clean.pcap")).unwrap()
}

/// The file header and the first `records` records of sim-clean.pcap, and
/// `extra` bytes of the next record (a stall mid-record).
fn head(records: usize, extra: usize) -> Vec<u8> {
    let data = capture();
    let mut at = 24;
    for _ in 0..records {
        let caplen = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + caplen;
    }
    data[..at + extra].to_vec()
}

fn lwarscope(args: &[&str], stdin: Stdio) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("lwarscope"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Waits for the child at most `limit`; its exit code and output.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (
                status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}; stdout: {}; stderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a run stopped by `sig` after `frames` frames says and exits with.
fn assert_interrupted(sig: i32, frames: usize, code: Option<i32>, out: &str, err: &str) {
    let name = match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => unreachable!(),
    };
    assert_eq!(code, Some(128 + sig), "{err}");
    assert_eq!(
        err,
        format!(
            "lwarscope: interrupted by {name} after frame {frames}: the results cover only the frames read\n"
        )
    );
    assert!(
        out.contains(&format!(
            "│ interrupted             ┆ by {name} after frame {frames}: "
        )),
        "{out}"
    );
}

fn frames_line(report: &str) -> Option<u64> {
    report
        .lines()
        .find(|l| l.starts_with("│ frames "))?
        .split('┆')
        .nth(1)?
        .trim()
        .trim_end_matches('│')
        .trim()
        .parse()
        .ok()
}

/// A pipe on standard input, its writer alive and silent.
fn stalled_pipe(sig: i32, records: usize, extra: usize) {
    let mut child = lwarscope(&["-r", "-"], Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&head(records, extra)).unwrap();
    stdin.flush().unwrap();
    // Let it read what there is; the writer stays open (`stdin` is held).
    std::thread::sleep(Duration::from_millis(800));
    signal(&child, sig);
    let (code, out, err) = finish(child, Duration::from_secs(10));
    drop(stdin);
    assert_interrupted(sig, records, code, &out, &err);
    assert_eq!(frames_line(&out), Some(records as u64), "{out}\n{err}");
    assert!(out.contains("sessions"), "{out}");
}

#[test]
fn a_stalled_pipe_stops_at_the_first_sigint_with_its_results() {
    stalled_pipe(libc::SIGINT, 40, 0);
}

#[test]
fn a_stalled_pipe_stops_at_the_first_sigterm_with_its_results() {
    stalled_pipe(libc::SIGTERM, 40, 0);
}

#[test]
fn a_pipe_stalled_in_the_middle_of_a_record_stops_too() {
    stalled_pipe(libc::SIGINT, 25, 30);
}

/// A pcapng block.
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let len = (12 + body.len().div_ceil(4) * 4) as u32;
    let mut b = kind.to_le_bytes().to_vec();
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(body);
    b.resize(len as usize - 4, 0);
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// The first `records` records of sim-clean.pcap as pcapng (a section, an
/// Ethernet and a raw IP interface, the records on the first), and `extra`
/// bytes of the next block.
fn pcapng_head(records: usize, extra: usize) -> Vec<u8> {
    let data = capture();
    let mut out = Vec::new();
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    out.extend(block(0x0a0d_0d0a, &shb));
    for link in [1u16, 101] {
        let mut idb = link.to_le_bytes().to_vec();
        idb.extend_from_slice(&[0; 6]);
        out.extend(block(1, &idb));
    }
    let mut at = 24;
    for i in 0..=records {
        let word = |k: usize| u32::from_le_bytes(data[at + k..at + k + 4].try_into().unwrap());
        let (secs, usecs, caplen, len) = (word(0), word(4), word(8), word(12));
        let units = u64::from(secs) * 1_000_000 + u64::from(usecs);
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(units as u32).to_le_bytes());
        epb.extend_from_slice(&caplen.to_le_bytes());
        epb.extend_from_slice(&len.to_le_bytes());
        epb.extend_from_slice(&data[at + 16..at + 16 + caplen as usize]);
        let b = block(6, &epb);
        if i == records {
            out.extend_from_slice(&b[..extra]);
        } else {
            out.extend(b);
        }
        at += 16 + caplen as usize;
    }
    out
}

/// A pcapng stream with interfaces of two link types (read by lwarscope's
/// own parser, not libpcap): stopped by the first signal while its writer
/// stalls, between blocks and inside one, with the results of what was read.
#[test]
fn a_stalled_pcapng_pipe_stops_at_the_first_signal_with_its_results() {
    for (sig, records, extra) in [(libc::SIGINT, 40, 0), (libc::SIGTERM, 25, 30)] {
        let mut child = lwarscope(&["-r", "-"], Stdio::piped());
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&pcapng_head(records, extra)).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(800));
        signal(&child, sig);
        let (code, out, err) = finish(child, Duration::from_secs(10));
        drop(stdin);
        assert_interrupted(sig, records, code, &out, &err);
        assert_eq!(frames_line(&out), Some(records as u64), "{out}\n{err}");
        assert!(out.contains("sessions"), "{out}");
    }
}

/// A named FIFO: read at all (its first bytes once), and stopped by the first
/// signal while its writer stalls.
#[test]
fn a_stalled_fifo_stops_at_the_first_signal_with_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("capture.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = lwarscope(&["-r", fifo.to_str().unwrap()], Stdio::null());
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all(&head(30, 0)).unwrap();
        w.flush().unwrap();
        // Stall, the FIFO open, until the reader is gone.
        std::thread::sleep(Duration::from_secs(3));
    });
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGINT);
    let (code, out, err) = finish(child, Duration::from_secs(10));
    assert_interrupted(libc::SIGINT, 30, code, &out, &err);
    assert_eq!(frames_line(&out), Some(30), "{out}\n{err}");
    writer.join().unwrap();
}

/// A FIFO written whole and closed: the whole capture (no signal needed).
#[test]
fn a_fifo_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("capture.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = lwarscope(&["-r", fifo.to_str().unwrap()], Stdio::null());
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all(&capture()).unwrap();
    });
    let (code, out, err) = finish(child, Duration::from_secs(20));
    writer.join().unwrap();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(frames_line(&out), Some(483), "{out}");
}
