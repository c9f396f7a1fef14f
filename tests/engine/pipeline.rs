//! The two-thread pipeline (a reader thread handing batches of datagrams to
//! the engine's thread) gives the same bytes as one thread for every output,
//! with the same errors and warnings (and allocates nothing per packet:
//! `tests/pipeline_alloc.rs`).

use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Standard output, standard error and exit code of a run on `threads` threads.
fn run(threads: &str, args: &[&str]) -> (String, String, Option<i32>) {
    run_sharing(threads, None, args)
}

/// [`run`], the reader rendering ahead a fixed `share` of 64 datagrams.
fn run_sharing(threads: &str, share: Option<u32>, args: &[&str]) -> (String, String, Option<i32>) {
    let mut cmd = Command::cargo_bin("lwarscope").unwrap();
    match share {
        Some(share) => cmd.env("LWARSCOPE_RENDER_SHARE", share.to_string()),
        None => cmd.env_remove("LWARSCOPE_RENDER_SHARE"),
    };
    let out = cmd
        .current_dir(root())
        .env("LWARSCOPE_THREADS", threads)
        .env_remove("LWARSCOPE_READER")
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn same_on_one_and_two_threads(args: &[&str]) {
    let one = run("1", args);
    let two = run("2", args);
    assert_eq!(one, two, "lwarscope {}", args.join(" "));
}

#[test]
fn every_output_is_the_same_on_one_and_two_threads() {
    let captures = [
        "captures/sim-loss.pcap",
        "captures/sim-corrupt.pcap",
        "captures/mixed-lwar-strs.pcap",
        "captures/bg-reorder.pcap",
        "captures/strs-wrap.pcap",
        "captures/ksy-vessel-faults.pcap",
        "captures/real-server-clean.pcap",
    ];
    let outputs: [&[&str]; 8] = [
        &[],
        &["--packets"],
        &["--format", "jsonl"],
        &["--format", "json", "--packets"],
        &[
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "ip.src",
            "-e",
            "lwar.seqno",
        ],
        &["-V", "-x"],
        &["-Y", "resend || malformed", "--packets"],
        &["-q", "-z", "io,stat,1", "-z", "expert"],
    ];
    for c in captures {
        for o in outputs {
            let mut args = vec!["-r", c];
            args.extend_from_slice(o);
            same_on_one_and_two_threads(&args);
        }
        same_on_one_and_two_threads(&["check", c, "--deny", "malformed,violation"]);
    }
    // Several files as one stream, with a warning between them.
    same_on_one_and_two_threads(&[
        "-r",
        "captures/sim-loss.pcap",
        "captures/sim-clean.pcap",
        "--packets",
    ]);
    // A port decoded as another protocol (`-d`): the reader thread renders
    // ahead as that protocol, as the engine decodes it.
    for o in [
        &["--format", "jsonl"][..],
        &["-V"],
        &["-T", "fields", "-e", "strs_ksy.sequence_number"],
    ] {
        let mut args = vec![
            "-r",
            "captures/strs-wrap.pcap",
            "-d",
            "udp.port==7777,strs_ksy",
        ];
        args.extend_from_slice(o);
        same_on_one_and_two_threads(&args);
        let (out, err, code) = run("2", &args);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.lines().count() > 100, "{out}");
    }
}

#[test]
fn whatever_share_the_reader_renders_the_output_is_the_same() {
    // The reader renders ahead a share of the datagrams and the output
    // renders the others itself: none, an uneven share, all of them.
    for c in [
        "captures/sim-loss.pcap",
        "captures/mixed-lwar-strs.pcap",
        "captures/bg-reorder.pcap",
    ] {
        for o in [
            &["--format", "jsonl"][..],
            &["--packets"],
            &["-V", "-x"],
            &["-T", "fields", "-e", "frame.number", "-e", "lwar.seqno"],
        ] {
            let mut args = vec!["-r", c];
            args.extend_from_slice(o);
            let one = run("1", &args);
            assert_eq!(one.2, Some(0), "{}", one.1);
            for share in [0, 23, 64] {
                let two = run_sharing("2", Some(share), &args);
                assert_eq!(one, two, "share {share}: lwarscope {}", args.join(" "));
            }
        }
    }
    // A share out of range is said, and the run goes on adaptive.
    let (out, err, code) = run_sharing("2", None, &["-r", "captures/sim-loss.pcap", "--packets"]);
    let mut cmd = Command::cargo_bin("lwarscope").unwrap();
    let bad = cmd
        .current_dir(root())
        .env("LWARSCOPE_THREADS", "2")
        .env("LWARSCOPE_RENDER_SHARE", "65")
        .args(["-r", "captures/sim-loss.pcap", "--packets"])
        .output()
        .unwrap();
    assert_eq!(code, bad.status.code());
    assert_eq!(out, String::from_utf8_lossy(&bad.stdout));
    let bad_err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        bad_err
            .contains("warning: LWARSCOPE_RENDER_SHARE=65 is not a number from 0 to 64: ignored"),
        "{bad_err}"
    );
    assert!(!err.contains("LWARSCOPE_RENDER_SHARE"), "{err}");
}

#[test]
fn an_error_after_some_frames_comes_after_their_results_on_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(root().join("captures/sim-eight.pcap")).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let cut = cut.to_str().unwrap();
    for args in [&["-r", cut][..], &["-r", cut, "--format", "jsonl"]] {
        let (out, err, code) = run("2", args);
        assert_eq!((out.clone(), err.clone(), code), run("1", args));
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("file cut off in the middle of a record"),
            "{err}"
        );
        assert!(!out.is_empty());
    }
}
