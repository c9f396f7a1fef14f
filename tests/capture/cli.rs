//! The binary's capture front end: results, and every error case with its
//! one-line message and exit code 2.

use crate::common;

use assert_cmd::Command;
use common::*;
use lwarscope::capture::LinkType;
use lwarscope::capture::synth::{Link, udp_frame};
use predicates::prelude::*;
use std::os::unix::process::CommandExt;

/// stderr is exactly one `error: ...` line.
fn one_error_line(output: &std::process::Output, want: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(want), "{stderr:?} lacks {want:?}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
}

/// A number of the report's capture table: the row `│ label ┆ N │`.
fn row(stdout: &str, label: &str) -> Option<u64> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("│ {label} ")))?;
    line.split('┆')
        .nth(1)?
        .trim()
        .trim_end_matches('│')
        .trim()
        .parse()
        .ok()
}

#[test]
fn the_real_capture_is_summarised() {
    let out = lwarscope().arg("-r").arg(real_capture()).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(row(&stdout, "frames"), Some(525), "{stdout}");
    assert_eq!(row(&stdout, "lwar packets"), Some(525), "{stdout}");
    assert_eq!(row(&stdout, "truncated"), Some(0), "{stdout}");
    assert_eq!(row(&stdout, "malformed"), Some(0), "{stdout}");
    assert_eq!(row(&stdout, "Update"), Some(313), "{stdout}");
    assert!(!stdout.contains("libpcap"), "{stdout}");
}

#[test]
fn standard_input_and_several_files_are_read() {
    let bytes = std::fs::read(real_capture()).unwrap();
    lwarscope()
        .args(["-r", "-"])
        .write_stdin(bytes)
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"│ frames +┆ 525 ").unwrap());
    lwarscope()
        .arg("-r")
        .arg(real_capture())
        .arg(real_capture())
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"│ lwar packets +┆ 1050 ").unwrap());
}

#[test]
fn count_stops_after_n_lwar_datagrams() {
    lwarscope()
        .arg("-r")
        .arg(real_capture())
        .args(["-c", "10"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"│ frames +┆ 10 ").unwrap());
}

#[test]
fn a_missing_file() {
    let out = lwarscope().args(["-r", "no/such.pcap"]).output().unwrap();
    one_error_line(&out, "error: no/such.pcap: no such file");
}

#[test]
fn a_file_that_is_not_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "these are notes, not packets").unwrap();
    let out = lwarscope().arg("-r").arg(&path).output().unwrap();
    one_error_line(&out, "notes.txt: not a pcap or pcapng file");
    let out = lwarscope()
        .args(["-r", "-"])
        .write_stdin(Vec::new())
        .output()
        .unwrap();
    one_error_line(&out, "error: standard input: not a pcap or pcapng file");
}

#[test]
fn a_file_cut_off_mid_record_is_analysed_up_to_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.pcap");
    let src = "10.0.0.1:1000".parse().unwrap();
    let dst = "10.0.0.2:32422".parse().unwrap();
    let frames: Vec<Fx> = (0..4)
        .map(|i| {
            Fx::whole(
                i,
                udp_frame(Link::Ethernet, src, dst, &lwar_payload(i as u32, 5)),
            )
        })
        .collect();
    write_pcap(&path, LinkType::Ethernet, &frames);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
    let out = lwarscope().arg("-r").arg(&path).output().unwrap();
    one_error_line(
        &out,
        "cut.pcap: file cut off in the middle of a record, after 3 complete packets",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(row(&stdout, "lwar packets"), Some(3), "{stdout}");
}

#[test]
fn an_unsupported_link_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wifi.pcap");
    write_pcap(&path, LinkType::Ethernet, &[Fx::whole(0, vec![0; 30])]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20..24].copy_from_slice(&105u32.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let out = lwarscope().arg("-r").arg(&path).output().unwrap();
    one_error_line(&out, "unsupported link type 105 (IEEE802_11)");
}

#[test]
fn an_unknown_interface_lists_the_existing_ones() {
    let out = lwarscope().args(["-i", "nosuch9"]).output().unwrap();
    one_error_line(&out, "error: unknown interface 'nosuch9' (available: ");
    assert!(String::from_utf8_lossy(&out.stderr).contains("lo"));
}

#[test]
fn an_invalid_filter_gives_libpcaps_message() {
    let out = lwarscope()
        .args(["-i", "lo", "-f", "udp and (port"])
        .output()
        .unwrap();
    one_error_line(
        &out,
        "error: invalid capture filter 'udp and (port': can't parse filter expression: syntax error",
    );
}

#[test]
fn no_permission_to_capture_says_how_to_get_it() {
    // As an unprivileged user (the tests run as root; CI too). The binary is
    // run from a copy that user may reach: a checkout under /root (mode 700)
    // is not.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.path().join("lwarscope");
    std::fs::copy(assert_cmd::cargo::cargo_bin("lwarscope"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Another test's child, forked while the copy was open for writing and
    // not yet exec'd, may hold it open a moment: exec then fails with
    // ETXTBSY ("text file busy"), so that one error is retried.
    let mut tries = 0;
    let out = loop {
        let mut cmd = std::process::Command::new(&bin);
        cmd.args(["-i", "lo"]).uid(65534).gid(65534);
        match Command::from_std(cmd).output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            out => break out.unwrap(),
        }
    };
    one_error_line(
        &out,
        "error: no permission to capture on lo: run as root, or give the binary the capabilities: setcap cap_net_raw,cap_net_admin=eip ",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("lwarscope"));
}

#[test]
fn usage_errors_exit_with_2() {
    // No input.
    lwarscope().assert().code(2);
    // Live-only options without -i.
    for args in [
        &["-r", "x.pcap", "-f", "udp"][..],
        &["-r", "x.pcap", "-w", "out.pcap"],
        &["-r", "x.pcap", "--duration", "5"],
        &["-r", "x.pcap", "-i", "lo"],
    ] {
        lwarscope().args(args).assert().code(2);
    }
    lwarscope()
        .args(["-i", "lo", "--duration", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "'soon' is not a number of seconds",
        ));
}

#[test]
fn help_documents_the_options() {
    let out = lwarscope().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--read",
        "--interface",
        "--filter",
        "--snapshot-length",
        "--buffer-size",
        "--immediate-mode",
        "--no-promiscuous-mode",
        "--count",
        "--duration",
        "--write",
        "--list-interfaces",
        "setcap cap_net_raw,cap_net_admin=eip",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn list_interfaces_shows_loopback() {
    lwarscope()
        .arg("-D")
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^\d+\.lo \[.*Loopback").unwrap());
}

/// Live, end to end: a quiet capture stops at its duration and still prints
/// libpcap's statistics; `-w` saves what was captured.
#[test]
fn a_live_capture_stops_at_its_duration_and_saves_its_frames() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("live.pcap");
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let filter = format!("udp and dst port {}", b.local_addr().unwrap().port());
    let bin = assert_cmd::cargo::cargo_bin("lwarscope");
    let child = std::process::Command::new(bin)
        .args(["-i", "lo", "-f", &filter, "--duration", "3", "-w"])
        .arg(&saved)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Send for a while; each datagram the capture saw is in the file.
    let to = b.local_addr().unwrap();
    for n in 0..50 {
        a.send_to(&lwar_payload(n, 3), to).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(row(&stdout, "received by libpcap").is_some(), "{stdout}");
    let run = read_files(&[saved]);
    let lwar = run
        .classes()
        .iter()
        .filter(|c| matches!(c, Class::Lwar { .. }))
        .count() as u64;
    assert!(lwar > 0, "the capture saw some datagrams");
    assert_eq!(
        row(&stdout, "lwar packets"),
        Some(lwar),
        "{stdout} vs {lwar} saved"
    );
}

/// Ctrl-C stops a live capture cleanly: results printed, exit status 0.
#[test]
fn ctrl_c_stops_cleanly_and_prints_the_results() {
    stops_cleanly_on(libc::SIGINT);
}

/// So do SIGTERM and a hang-up, as tcpdump does.
#[test]
fn sigterm_and_sighup_stop_cleanly_and_print_the_results() {
    stops_cleanly_on(libc::SIGTERM);
    stops_cleanly_on(libc::SIGHUP);
}

fn stops_cleanly_on(signal: libc::c_int) {
    let bin = assert_cmd::cargo::cargo_bin("lwarscope");
    let child = std::process::Command::new(bin)
        .args(["-i", "lo", "-f", "udp port 9 and udp port 10"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(row(&stdout, "frames"), Some(0), "{stdout}");
    assert!(row(&stdout, "received by libpcap").is_some(), "{stdout}");
}

#[test]
fn decode_as_takes_a_port_for_a_protocol_and_the_report_says_so() {
    let out = lwarscope()
        .args(["-r", "captures/sim-loss.pcap", "-d", "udp.port==50001,lwar"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("by port"), "{stdout}");
    assert!(
        stdout.contains(" lwar ┆"),
        "the protocol under the session number: {stdout}"
    );
    // Without -d, lwar's own mark recognises every flow: no protocol column.
    let plain = lwarscope()
        .args(["-r", "captures/sim-loss.pcap"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("by port"));
    for (spec, says) in [
        ("udp.port==0,lwar", "is not a UDP port"),
        ("udp.port==7777,quake", "unknown protocol `quake`"),
        ("tcp.port==7777,lwar", "only udp.port==N"),
    ] {
        lwarscope()
            .args(["-r", "captures/sim-loss.pcap", "-d", spec])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}

#[test]
fn count_stops_after_n_packets_of_known_protocols() {
    let out = lwarscope()
        .args(["-r", "captures/sim-loss.pcap", "-c", "7", "--packets"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 7);
}

#[test]
fn list_fields_names_every_registered_field() {
    let out = lwarscope().arg("--list-fields").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["lwar.seqno", "lwar.input.aim_x", "lwar.update.health"] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
}

#[test]
fn options_that_cannot_apply_are_refused_by_name() {
    for (args, says) in [
        (
            &["-r", "captures/sim-loss.pcap", "-B", "100"][..],
            "--buffer-size",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "-p"],
            "--no-promiscuous-mode",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--immediate-mode"],
            "--immediate-mode",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "-s", "100"],
            "--snapshot-length",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--tui", "-V"],
            "-V applies to printed output",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--tui", "--format", "json"],
            "--format applies",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--tui"],
            "needs a terminal",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--tui", "-w", "x.pcapng"],
            "not from the terminal UI",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "-f", "udp and and"],
            "invalid capture filter",
        ),
    ] {
        lwarscope()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}

#[test]
fn a_capture_filter_and_a_duration_apply_to_files() {
    let out = lwarscope()
        .args(["-r", "captures/sim-loss.pcap", "-f", "udp port 50001"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Client 50001's session only: 202 + 109 packets (the report's sessions table).
    assert_eq!(row(&stdout, "lwar packets"), Some(311), "{stdout}");
    assert_eq!(row(&stdout, "frames"), Some(899), "{stdout}");
    assert_eq!(
        row(&stdout, "rejected by the capture filter (-f)"),
        Some(899 - 311),
        "{stdout}"
    );
    // Frame numbers stay those of the file.
    let lines = lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "-f",
            "udp port 50002",
            "--packets",
        ])
        .output()
        .unwrap();
    let first: u64 = String::from_utf8_lossy(&lines.stdout)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(first > 1, "the first packet of client 50002 is not frame 1");
    // One second of capture time from the first frame.
    let out = lwarscope()
        .args(["-r", "captures/sim-loss.pcap", "-a", "1", "--packets"])
        .output()
        .unwrap();
    let last_time: f64 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    assert!((0.9..=1.0).contains(&last_time), "{last_time}");
}

#[test]
fn a_frame_with_a_broken_udp_length_is_counted_apart_from_other_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.pcap");
    let src = "10.0.0.1:5000".parse().unwrap();
    let dst = "10.0.0.2:32422".parse().unwrap();
    let good = udp_frame(Link::Ethernet, src, dst, &lwar_payload(1, 5));
    let mut broken = good.clone();
    // The UDP length (after 14 bytes of Ethernet and 20 of IPv4) claims more
    // than the frame holds, in a frame the capture kept whole.
    broken[38..40].copy_from_slice(&2000u16.to_be_bytes());
    write_pcap(
        &path,
        LinkType::Ethernet,
        &[Fx::whole(1, good), Fx::whole(2, broken)],
    );
    let out = lwarscope().arg("-r").arg(&path).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(row(&stdout, "broken IP/UDP headers"), Some(1), "{stdout}");
    assert_eq!(row(&stdout, "other traffic (skipped)"), Some(0), "{stdout}");
    assert_eq!(row(&stdout, "lwar packets"), Some(1), "{stdout}");
}

/// A live capture saved to a device that refuses the bytes (`-w /dev/full`):
/// the error is reported and the run fails. Regression: libpcap's dumper
/// dropped the buffer it failed to write, the final flush had nothing left,
/// and the run exited 0 with nothing saved.
#[test]
fn a_live_savefile_that_cannot_be_written_fails_the_run() {
    let bin = assert_cmd::cargo::cargo_bin("lwarscope");
    let child = std::process::Command::new(bin)
        .args(["-i", "lo", "-f", "udp port 47123", "-w", "/dev/full"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    // More than the writer's buffer.
    for _ in 0..2000 {
        let _ = socket.send_to(&[0x78; 200], "127.0.0.1:47123");
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(
        stderr.matches("No space left").count(),
        1,
        "said once: {stderr}"
    );
}

/// A compressed capture with a record libpcap refuses in the middle, and more
/// bytes after it: an error that names the file, at once. Regression: the
/// inflating thread, blocked on the full pipe libpcap no longer read, was
/// joined, and the run hung for ever (SIGTERM included).
#[test]
fn a_refused_record_inside_a_compressed_capture_is_an_error_not_a_hang() {
    use std::io::Write;
    let data = std::fs::read("captures/sim-timeout.pcap").unwrap();
    let caplen = u32::from_le_bytes(data[32..36].try_into().unwrap()) as usize;
    let mut bytes = data[..24 + 16 + caplen].to_vec();
    // A record claiming 4 GB, then the whole capture again.
    for v in [0u32, 0, 0xffff_fff0, 0xffff_fff0] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&data[24..]);
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("refused.pcap.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let start = std::time::Instant::now();
    let out = lwarscope()
        .args(["-r", gz.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refused.pcap.gz"), "{stderr}");
}
