//! A library that reads a compressed capture (or a stream) through a thread
//! and a pipe must not kill the program that uses it when it stops reading
//! early: the pipe's writer then gets `EPIPE`, not SIGPIPE. This test runs
//! with SIGPIPE's default action (death), as a C program or a fuzzer's
//! runtime would; Rust's runtime ignores it, which hid the bug. Found by the
//! `capture_file` fuzz target (the process died of SIGPIPE).

use lwarscope::capture::Source;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

#[test]
fn stopping_early_on_a_compressed_capture_does_not_raise_sigpipe() {
    // SAFETY: restores the default action, for this test's process only.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("big.pcap.gz");
    let data =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/sim-timeout.pcap"))
            .unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&data).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    for _ in 0..5 {
        let mut source = Source::files(&[&gz]).unwrap();
        // One frame, then the reader is gone while the thread still writes.
        assert!(source.next_frame().unwrap().is_some());
        drop(source);
        std::thread::sleep(Duration::from_millis(50));
    }
    // Still alive.
}
