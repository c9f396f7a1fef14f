//! `-r IN -Y FILTER -w OUT`: the frames of the selected packets, written whole,
//! read back here by lwarscope's own front end and compared with the input.

use crate::common;

use common::*;
use lwarscope::capture::LinkType;
use lwarscope::capture::synth::{Link, frame, udp_fragments};
use predicates::prelude::*;
use std::net::SocketAddr;
use std::path::Path;

/// Every frame of a file: (time in ns, bytes), read by lwarscope's front end.
fn frames(path: &Path) -> Vec<(u64, usize)> {
    let run = read_files(&[path.to_path_buf()]);
    assert!(run.error.is_none(), "{:?}", run.error);
    run.frames
        .iter()
        .map(|f| (f.ts.nanos(), f.cap_len as usize))
        .collect()
}

/// The frame numbers `--packets -Y FILTER` prints for a capture.
fn selected(capture: &str, filter: &str) -> Vec<u64> {
    let out = lwarscope()
        .args(["-r", capture, "-Y", filter, "--packets"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn the_frames_that_pass_the_filter_are_written_whole_in_pcapng_and_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let capture = "captures/sim-loss.pcap";
    let want = selected(capture, "resend || Join");
    assert!(want.len() > 10, "{want:?}");
    let all = frames(Path::new(capture));
    for (name, format) in [("out.pcapng", None), ("out.pcap", Some("pcap"))] {
        let out = dir.path().join(name);
        let mut cmd = lwarscope();
        cmd.args(["-r", capture, "-Y", "resend || Join", "-w"])
            .arg(&out);
        if let Some(f) = format {
            cmd.args(["-F", f]);
        }
        // The report still prints: the filter picks what is written.
        cmd.assert()
            .success()
            .stdout(predicate::str::contains("lwar packets"));
        let bytes = std::fs::read(&out).unwrap();
        let magic = u32::from_le_bytes(bytes[..4].try_into().unwrap());
        match format {
            None => assert_eq!(magic, 0x0a0d_0d0a, "a pcapng section header"),
            Some(_) => assert_eq!(magic, 0xa1b2_3c4d, "a nanosecond pcap, this host's order"),
        }
        let got = frames(&out);
        let expected: Vec<_> = want.iter().map(|&n| all[n as usize - 1]).collect();
        assert_eq!(got, expected, "{name}: same frames, times and lengths");
    }
}

#[test]
fn without_a_filter_every_frame_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all.pcapng");
    lwarscope()
        .args(["-r", "captures/sim-corrupt.pcap", "-w"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        frames(&out),
        frames(Path::new("captures/sim-corrupt.pcap")),
        "the non-lwar frames too"
    );
}

#[test]
fn a_selected_reassembled_datagram_is_written_with_every_fragment() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("frags.pcap");
    let src: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let dst: SocketAddr = "10.0.0.2:32422".parse().unwrap();
    let big = lwar_payload(7, 240); // 3 fragments
    let small = lwar_payload(8, 10);
    let frags = udp_fragments(src, dst, 0x42, &big, 104);
    assert_eq!(frags.len(), 3);
    let other = lwarscope::capture::synth::udp_frame(Link::Ethernet, dst, src, &small);
    let fx = [
        Fx::whole(1, frame(Link::Ethernet, &frags[1])),
        Fx::whole(2, other),
        Fx::whole(3, frame(Link::Ethernet, &frags[0])),
        Fx::whole(4, frame(Link::Ethernet, &frags[2])),
    ];
    write_pcap(&input, LinkType::Ethernet, &fx);
    let out = dir.path().join("out.pcapng");
    lwarscope()
        .arg("-r")
        .arg(&input)
        .args(["-Y", "dir == c2s", "-w"])
        .arg(&out)
        .assert()
        .success();
    let all = frames(&input);
    assert_eq!(
        frames(&out),
        vec![all[0], all[2], all[3]],
        "the three fragments, in capture order, and not the other packet"
    );
}

#[test]
fn write_errors_fail_the_run() {
    let out = lwarscope()
        .args(["-r", "captures/sim-loss.pcap", "-w", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(
        stderr.matches("No space left").count(),
        1,
        "said once: {stderr}"
    );
    lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "-w",
            "/nonexistent/dir/x.pcapng",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/dir/x.pcapng"));
}
