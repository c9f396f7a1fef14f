//! `lwarscope check`: each exit code, each kind of rule, `--expect`, and JUnit
//! output that a JUnit parser accepts.

use assert_cmd::Command;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check() -> Command {
    let mut cmd = Command::cargo_bin("lwarscope").unwrap();
    cmd.current_dir(root()).arg("check");
    cmd
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = check().args(args).output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `lwarscope check ARGS --junit FILE`: the run, and the JUnit file as a
/// JUnit parser reads it.
fn run_junit(args: &[&str]) -> (Run, junit_parser::TestSuites) {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("check.xml");
    let r = run(&[args, &["--junit", xml.to_str().unwrap()]].concat());
    let file = std::io::BufReader::new(std::fs::File::open(&xml).unwrap());
    (r, junit_parser::from_reader(file).expect("valid JUnit XML"))
}

#[test]
fn every_listed_finding_is_a_name_check_takes() {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .arg("--list-findings")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert!(cols.len() > 3, "name, group, severity, meaning: {line}");
        assert!(["note", "warning", "error"].contains(&cols[2]), "{line}");
        names.push(cols[0]);
    }
    // Shared kinds, a protocol's kinds and its rules, described ones too.
    for name in [
        "resend",
        "lwar.input-gap",
        "strs.retransmit-limit",
        "lwar.violation.regular-before-synced",
        "timewarp.violation.dropped-address",
    ] {
        assert!(names.contains(&name), "{name} not in\n{text}");
    }
    assert!(text.contains("lwar.violation.after-disconnect          protocol  error    The server sent something other than Leave"));
    // Every one as `check` takes it: a limit each, all passing on a clean capture.
    let limits: Vec<String> = names.iter().map(|n| format!("{n}=1000000")).collect();
    let mut args = vec!["captures/sim-clean.pcap"];
    for limit in &limits {
        args.extend(["--max", limit]);
    }
    let r = run(&args);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("PASS"), "{}", r.stdout);
}

#[test]
fn exit_0_when_every_file_passes() {
    let r = run(&[
        "captures/sim-clean.pcap",
        "captures/sim-ipv6.pcap",
        "--deny",
        "malformed,violation,lost",
        "--max",
        "resend-rate=25%",
        "--min",
        "packets=100",
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "PASS  captures/sim-clean.pcap (5 rules): malformed 0, violation 0, lost 0, resend-rate 2.11% <= 25.00%, packets 483 >= 100\n\
         PASS  captures/sim-ipv6.pcap (5 rules): malformed 0, violation 0, lost 0, resend-rate 0.00% <= 25.00%, packets 301 >= 100\n\
         2 files: 2 passed, 0 failed\n"
    );
}

#[test]
fn exit_1_when_a_rule_fails_with_one_verdict_line_per_file() {
    let r = run(&[
        "captures/sim-clean.pcap",
        "captures/sim-corrupt.pcap",
        "--deny",
        "malformed",
    ]);
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.stdout,
        "PASS  captures/sim-clean.pcap (1 rule): malformed 0\n\
         FAIL  captures/sim-corrupt.pcap: 41 malformed (denied) [deny malformed]\n\
         2 files: 1 passed, 1 failed\n"
    );
}

#[test]
fn exit_2_on_an_unreadable_file_even_when_others_fail() {
    let r = run(&[
        "captures/sim-corrupt.pcap",
        "captures/no-such.pcap",
        "--deny",
        "malformed",
    ]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stdout.contains("FAIL  captures/sim-corrupt.pcap"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("ERROR captures/no-such.pcap: no such file\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("2 files: 0 passed, 1 failed, 1 error\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn exit_2_on_a_bad_rule_or_rules_file() {
    for args in [
        &["captures/sim-clean.pcap", "--deny", "resends"][..],
        &["captures/sim-clean.pcap", "--max", "resend-rate"],
        &["captures/sim-clean.pcap", "--max", "resend-rate=lots"],
        &["captures/sim-clean.pcap", "--deny", "jitter"],
        &["captures/sim-clean.pcap", "--rules", "no-such-rules.toml"],
        &["captures/sim-clean.pcap", "--expect", "no-such.json"],
    ] {
        let r = run(args);
        assert_eq!(r.code, Some(2), "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "deny = [\"lost\"]\n[maximum]\nlost = 1\n").unwrap();
    let r = run(&["captures/sim-clean.pcap", "--rules", bad.to_str().unwrap()]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("bad.toml"), "{}", r.stderr);
}

/// Each kind of rule, on a capture where it fails and one where it holds.
#[test]
fn each_kind_of_rule() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // (capture that fails, flag, rule, what the failure says)
        (
            "sim-corrupt",
            "--deny",
            "malformed",
            "41 malformed (denied)",
        ),
        (
            "sim-corrupt",
            "--deny",
            "violation",
            "14 violation (denied)",
        ),
        (
            "sim-corrupt",
            "--deny",
            "violation/invalid-utf8",
            "13 violation/invalid-utf8 (denied)",
        ),
        (
            "sim-tap-miss",
            "--deny",
            "not-captured",
            "2 not-captured (denied)",
        ),
        (
            "sim-tap-miss",
            "--max",
            "ack-unseen=1",
            "ack-unseen is 2, above 1",
        ),
        (
            "sim-reorder",
            "--max",
            "reordered=0",
            "reordered is 54, above 0",
        ),
        (
            "sim-timeout",
            "--max",
            "resend-rate=50%",
            "resend-rate is 93.46%, above 50.00%",
        ),
        (
            "sim-loss",
            "--max",
            "ack-delay-p95=50ms",
            "ack-delay-p95 is 99.3 ms, above 50.0 ms",
        ),
        ("sim-loss", "--max", "unacked=2", "unacked is 3, above 2"),
        ("sim-clean", "--min", "sessions=3", "sessions is 2, below 3"),
        (
            "sim-clean",
            "--min",
            "packets=10000",
            "packets is 483, below 10000",
        ),
    ];
    for (capture, flag, rule, why) in cases {
        let file = format!("captures/{capture}.pcap");
        let r = run(&[&file, flag, rule]);
        assert_eq!(r.code, Some(1), "{capture} {flag} {rule}: {}", r.stdout);
        assert!(
            r.stdout.contains(why),
            "{capture} {flag} {rule}: {}",
            r.stdout
        );
        // The same rule holds on the clean IPv6 capture, except the minimums and
        // the delay (the simulator acks within 100 ms everywhere).
        if *flag != "--min" && !rule.starts_with("ack-delay") {
            let r = run(&["captures/sim-ipv6.pcap", flag, rule]);
            assert_eq!(r.code, Some(0), "sim-ipv6 {flag} {rule}: {}", r.stdout);
        }
    }
    let r = run(&["captures/sim-loss.pcap", "--max", "ack-delay-p95=100ms"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
}

#[test]
fn rules_from_a_toml_file_add_to_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "deny = [\"malformed\", \"lost\", \"not-captured\"]\n\
         [max]\n\
         resend-rate = \"25%\"\n\
         ack-delay-p95 = \"0.2s\"\n\
         [min]\n\
         packets = 1\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    let r = run(&["captures/sim-loss.pcap", "--rules", rules]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        "PASS  captures/sim-loss.pcap (6 rules): malformed 0, lost 0, not-captured 0, \
         ack-delay-p95 99.3 ms <= 200.0 ms, resend-rate 2.78% <= 25.00%, packets 899 >= 1\n"
    );
    let r = run(&[
        "captures/sim-tap-miss.pcap",
        "--rules",
        rules,
        "--max",
        "gap=0",
    ]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("[deny not-captured]"), "{}", r.stdout);
    assert!(!r.stdout.contains("[deny lost]"), "{}", r.stdout);
    assert!(r.stdout.contains("[max gap=0]"), "{}", r.stdout);
}

#[test]
fn expect_compares_with_the_ground_truth_and_with_our_own_json() {
    // The simulator's ground truth.
    let r = run(&[
        "captures/sim-loss.pcap",
        "--expect",
        "captures/sim-loss.truth.json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);

    // A changed expectation fails, naming what differs.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("captures/sim-loss.truth.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["summary"]["findings"]["resend"] = 44.into();
    doc["summary"]["sessions"][1]["state"] = "timed-out".into();
    let changed = dir.path().join("changed.json");
    std::fs::write(&changed, doc.to_string()).unwrap();
    let r = run(&[
        "captures/sim-loss.pcap",
        "--expect",
        changed.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout.contains("findings.resend: expected 44, got 6"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "session 127.0.0.3:50002 -> 127.0.0.1:32422 state: expected timed-out, got closed"
        ),
        "{}",
        r.stdout
    );

    // lwarscope's own --format json and jsonl outputs read back as expectations.
    for format in ["json", "jsonl"] {
        let out = Command::cargo_bin("lwarscope")
            .unwrap()
            .current_dir(root())
            .args(["-r", "captures/sim-dup.pcap", "--format", format])
            .output()
            .unwrap();
        let expected = dir.path().join(format!("expected.{format}"));
        std::fs::write(&expected, &out.stdout).unwrap();
        let r = run(&[
            "captures/sim-dup.pcap",
            "--expect",
            expected.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{format}: {}", r.stdout);
        let r = run(&[
            "captures/sim-clean.pcap",
            "--expect",
            expected.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(1), "{format}: another capture differs");
    }
}

#[test]
fn junit_output_is_accepted_by_a_junit_parser() {
    let (r, suites) = run_junit(&[
        "captures/sim-clean.pcap",
        "captures/sim-corrupt.pcap",
        "captures/no-such.pcap",
        "--deny",
        "malformed,violation",
        "--max",
        "resend-rate=25%",
    ]);
    assert_eq!(r.code, Some(2));
    assert_eq!(suites.suites.len(), 3, "one suite per file");
    assert_eq!(
        suites.tests, 7,
        "3 rules for each readable file, 1 case for the error"
    );
    assert_eq!(suites.failures, 2);
    assert_eq!(suites.errors, 1);
    let corrupt = &suites.suites[1];
    assert_eq!(corrupt.name, "captures/sim-corrupt.pcap");
    assert_eq!(corrupt.cases.len(), 3);
    let failed: Vec<&str> = corrupt
        .cases
        .iter()
        .filter(|c| c.status.is_failure())
        .map(|c| c.name.as_str())
        .collect();
    // The parser names a case `classname::name`.
    assert_eq!(
        failed,
        [
            "captures/sim-corrupt.pcap::deny malformed",
            "captures/sim-corrupt.pcap::deny violation"
        ]
    );
    let missing = &suites.suites[2];
    assert!(missing.cases[0].status.is_error());
    assert!(suites.suites[0].cases.iter().all(|c| c.status.is_success()));
}

#[test]
fn junit_file_that_cannot_be_written_is_an_error() {
    let r = run(&[
        "captures/sim-clean.pcap",
        "--deny",
        "malformed",
        "--junit",
        "no/such/dir/check.xml",
    ]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.starts_with("error: no/such/dir/check.xml"),
        "{}",
        r.stderr
    );
}

#[test]
fn session_outcomes_gate_ci() {
    let r = run(&["captures/sim-timeout.pcap", "--deny", "timed-out"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout.contains("1 timed-out (denied) [deny timed-out]"),
        "{}",
        r.stdout
    );
    let r = run(&["captures/sim-full.pcap", "--max", "rejected=0"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.contains("rejected is 1, above 0"), "{}", r.stdout);
    let r = run(&["captures/sim-clean.pcap", "--deny", "timed-out,rejected"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
}

#[test]
fn allow_accepts_a_known_deviation_and_nothing_else() {
    let real = "captures/real-server-clean.pcap";
    let r = run(&[real, "--deny", "violation"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    // One incident per client: the server's messages after each Disconnect.
    assert!(r.stdout.contains("2 violation (denied)"), "{}", r.stdout);
    for allow in [
        "lwar.violation.after-disconnect",
        "violation/after-disconnect",
        "after-disconnect",
    ] {
        let r = run(&[real, "--deny", "violation", "--allow", allow]);
        assert_eq!(r.code, Some(0), "--allow {allow}: {}", r.stdout);
        let r = run(&[
            real,
            "--deny",
            "violation/after-disconnect",
            "--allow",
            allow,
        ]);
        assert_eq!(r.code, Some(0), "--allow {allow}: {}", r.stdout);
    }
    // Another rule stays denied: the corrupt capture has other violations.
    let r = run(&[
        "captures/sim-corrupt.pcap",
        "--deny",
        "violation",
        "--allow",
        "lwar.violation.after-disconnect",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    // In a rules file too.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "deny = [\"violation\"]\nallow = [\"lwar.violation.after-disconnect\"]\n",
    )
    .unwrap();
    let r = run(&[real, "--rules", rules.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    // A name that is no kind or rule is a clear error.
    let r = run(&[real, "--deny", "violation", "--allow", "after-disconect"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stderr.trim(),
        "error: rule `allow after-disconect`: --allow takes a finding kind or a violation rule (violation/RULE or PROTO.violation.RULE)"
    );
}

#[test]
fn loss_per_direction_gates_ci() {
    // sim-loss drops 10% of the clients' packets and 5% of the server's before
    // the tap; the clean capture drops none.
    let r = run(&["captures/sim-loss.pcap", "--max", "loss=2%"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("loss is 11.11%, above 2.00% [max loss=2%]"),
        "{}",
        r.stdout
    );
    let r = run(&["captures/sim-clean.pcap", "--max", "loss=0.02"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
}

/// A capture of UDP traffic no protocol recognises: `n` datagrams between a
/// client and port 7455 (a game moved to a port no protocol is known on),
/// and `dns` DNS queries. The client's port is in as many datagrams as the
/// server's: the lower one, the server's, is the one to try.
fn unknown_traffic(path: &Path, n: usize, dns: usize) {
    use lwarscope::capture::LinkType;
    use lwarscope::capture::Timestamp;
    use lwarscope::capture::synth::{Link, PcapWriter, udp_frame};
    let client: std::net::SocketAddr = "10.0.0.5:40000".parse().unwrap();
    let server: std::net::SocketAddr = "10.0.0.1:7455".parse().unwrap();
    let resolver: std::net::SocketAddr = "10.0.0.53:53".parse().unwrap();
    let mut w = PcapWriter::create(path, LinkType::Ethernet).unwrap();
    let mut ns = 1_700_000_000_000_000_000u64;
    for i in 0..n + dns {
        ns += 10_000_000;
        let frame = if i >= n {
            let query: std::net::SocketAddr = "10.0.0.5:40001".parse().unwrap();
            udp_frame(Link::Ethernet, query, resolver, b"\x12\x34\x01\x00\x00\x01")
        } else if i % 2 == 0 {
            udp_frame(
                Link::Ethernet,
                client,
                server,
                b"\xfe\xedgame state, no known protocol",
            )
        } else {
            udp_frame(
                Link::Ethernet,
                server,
                client,
                b"\xfe\xedreply, no known protocol",
            )
        };
        w.write(Timestamp(ns), &frame);
    }
    w.finish().unwrap();
}

const PROTOS: &str = "PROTO: lwar, strs, bg, vessel, vessel_fixed, timewarp, strs_ksy";

/// A capture with no packet of a known protocol (a game on another port, a
/// capture begun after the handshake) passed `--deny malformed` with exit 0:
/// nothing was judged. It is an ERROR (exit 2) saying why and what to try, in
/// the verdict line, `--format json` and JUnit, unless the rules judge the
/// number of packets themselves (`--min packets=N`).
#[test]
fn a_capture_with_no_packet_of_a_known_protocol_is_an_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("moved.pcap");
    unknown_traffic(&game, 556, 10);
    let g = game.to_str().unwrap();
    let why = format!(
        "no packet of a known protocol among 566 UDP datagrams (top port 7455: 556); if the \
         game uses another port or the capture began after its handshake, try \
         -d udp.port==7455,PROTO ({PROTOS})"
    );
    let r = run(&[g, "--deny", "malformed"]);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, format!("ERROR {g}: {why}\n"));
    // With no rule at all: the same error; the warning says no rule is given.
    let r = run(&[g]);
    assert_eq!((r.code, r.stdout), (Some(2), format!("ERROR {g}: {why}\n")));
    assert_eq!(
        r.stderr,
        "warning: no rules: every readable capture with packets of a known protocol passes; \
         add --deny, --max, --min, --rules or --expect\n"
    );

    // As data: an error verdict with the reason.
    let r = run(&[g, "--deny", "malformed", "--format", "json"]);
    assert_eq!(r.code, Some(2));
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["files"][0]["verdict"], "error");
    assert_eq!(doc["files"][0]["error"], why.as_str());
    assert_eq!(
        (
            &doc["passed"],
            &doc["failed"],
            &doc["errors"],
            &doc["exit_code"]
        ),
        (&0.into(), &0.into(), &1.into(), &2.into())
    );
    // In JUnit: an error case that names what is missing.
    let (r, suites) = run_junit(&[g, "--deny", "malformed"]);
    assert_eq!(r.code, Some(2));
    assert_eq!((suites.tests, suites.failures, suites.errors), (1, 0, 1));
    let case = &suites.suites[0].cases[0];
    assert_eq!(case.name, format!("{g}::packets of a known protocol"));
    match &case.status {
        junit_parser::TestStatus::Error(e) => assert_eq!(e.message, why),
        other => panic!("{other:?}"),
    }

    // The rules may judge it: `--min packets=0` accepts an empty capture,
    // `--min packets=1` fails it as a rule; in a rules file too.
    let r = run(&[g, "--deny", "malformed", "--min", "packets=0"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        format!("PASS  {g} (2 rules): malformed 0, packets 0 >= 0\n")
    );
    let r = run(&[g, "--min", "packets=1"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        format!("FAIL  {g}: packets is 0, below 1 [min packets=1]\n")
    );
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "deny = [\"malformed\"]\n[min]\npackets = 0\n").unwrap();
    let r = run(&[g, "--rules", rules.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    // `--max packets=1000` says nothing of an empty capture: still an error.
    let r = run(&[g, "--max", "packets=1000"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);

    // What to try works: the port decoded as a protocol is judged (here it
    // is not that protocol's, so every packet is malformed).
    let r = run(&[g, "--deny", "malformed", "-d", "udp.port==7455,lwar"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.starts_with("FAIL"), "{}", r.stdout);
}

/// The other ways to hold nothing: no frame, no UDP, a window with nothing
/// in it, a Battlegrounds capture begun after its handshake; and a folder
/// where one file holds nothing.
#[test]
fn every_way_to_hold_nothing_is_an_error_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pcap");
    lwarscope::capture::synth::PcapWriter::create(&empty, lwarscope::capture::LinkType::Ethernet)
        .unwrap()
        .finish()
        .unwrap();
    let e = empty.to_str().unwrap();
    let r = run(&[e, "--deny", "malformed"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stdout,
        format!("ERROR {e}: no packet of a known protocol: the capture holds no frame\n")
    );
    // Frames, none of them UDP (ARP: the Ethernet type patched).
    let arp = dir.path().join("arp.pcap");
    let mut w =
        lwarscope::capture::synth::PcapWriter::create(&arp, lwarscope::capture::LinkType::Ethernet)
            .unwrap();
    let (a, b) = ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap());
    for i in 0..3u64 {
        let mut frame = lwarscope::capture::synth::udp_frame(
            lwarscope::capture::synth::Link::Ethernet,
            a,
            b,
            b"who has",
        );
        frame[12..14].copy_from_slice(&[0x08, 0x06]);
        w.write(
            lwarscope::capture::Timestamp(1_700_000_000_000_000_000 + i),
            &frame,
        );
    }
    w.finish().unwrap();
    let a = arp.to_str().unwrap();
    let r = run(&[a, "--deny", "malformed"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stdout,
        format!(
            "ERROR {a}: no packet of a known protocol: none of its 3 frames is a UDP datagram \
             (a capture filter that leaves the game out?)\n"
        )
    );
    let r = run(&[
        "captures/sim-clean.pcap",
        "--deny",
        "lost",
        "--window",
        "100..",
    ]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stdout,
        "ERROR captures/sim-clean.pcap [window 100..]: no packet of a known protocol in the \
         part judged (483 in the whole capture)\n"
    );
    // Begun after the handshake: what to try is the truth's own `-d`.
    let r = run(&["captures/bg-midsession.pcap", "--deny", "malformed"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stdout,
        format!(
            "ERROR captures/bg-midsession.pcap: no packet of a known protocol among 224 UDP \
             datagrams; port 7777: 224 datagrams, 100 % decode as Battlegrounds: try -d \
             udp.port==7777,bg\n"
        )
    );
    let r = run(&[
        "captures/bg-midsession.pcap",
        "--deny",
        "malformed",
        "-d",
        "udp.port==7777,bg",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    // `check DIR`: the file with nothing is the error, the others judged.
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::copy(root().join("captures/sim-clean.pcap"), fleet.join("a.pcap")).unwrap();
    unknown_traffic(&fleet.join("b.pcap"), 20, 0);
    let f = fleet.to_str().unwrap();
    let r = run(&[f, "--deny", "malformed"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        format!(
            "PASS  {f}/a.pcap (1 rule): malformed 0\n\
             ERROR {f}/b.pcap: no packet of a known protocol among 20 UDP datagrams (top port \
             7455: 20); if the game uses another port or the capture began after its \
             handshake, try -d udp.port==7455,PROTO ({PROTOS})\n\
             2 files: 1 passed, 0 failed, 1 error\n"
        )
    );
}

/// The corpus captures and their truth files, in path order.
fn corpus_truths() -> (Vec<String>, Vec<String>) {
    let mut pcaps = Vec::new();
    let mut truths = Vec::new();
    for e in std::fs::read_dir(root().join("captures")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".truth.json") {
            truths.push(format!("captures/{name}"));
        } else if name.ends_with(".pcap") {
            pcaps.push(format!("captures/{name}"));
        }
    }
    pcaps.sort();
    truths.sort();
    (pcaps, truths)
}

/// `check --expect` takes every simulator's truth, as docs/guide/ci-gate.md promises:
/// lwar's, Starstrike's, Battlegrounds', the described protocols' and the
/// mixed capture's. The Starstrike, Battlegrounds, described and mixed ones
/// were refused with raw decoder errors (`missing field `c2s``). Every corpus
/// capture passes with its own truth (with the `-d` its truth names).
#[test]
fn expect_passes_every_corpus_capture_with_its_own_truth() {
    let (_, truths) = corpus_truths();
    assert_eq!(truths.len(), 44, "{truths:?}");
    for kind in [
        "sim-", "strs-", "bg-", "bg-be-", "vessel-", "ksy-", "mixed-",
    ] {
        assert!(truths.iter().any(|t| t.contains(kind)), "{kind}");
    }
    for truth in &truths {
        let pcap = truth.replace(".truth.json", ".pcap");
        let r = run(&[&pcap, "--expect", truth]);
        assert_eq!(r.code, Some(0), "{truth}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, format!("PASS  {pcap} (1 rule)\n"));
    }
}

/// Every corpus capture paired with another capture's truth fails with a
/// readable difference (in process: one analysis per capture and `-d`), the
/// two captures no count tells apart excepted.
#[test]
fn expect_fails_every_capture_paired_with_another_captures_truth() {
    use lwarscope::command::analyse_file;
    use lwarscope::engine::TrackerConfig;
    use lwarscope::proto::truth;
    let (pcaps, truths) = corpus_truths();
    let mut analyses = std::collections::HashMap::new();
    let mut pairs = 0;
    let mut same = Vec::new();
    for t in &truths {
        let expected = truth::read(&std::fs::read_to_string(root().join(t)).unwrap()).unwrap();
        for p in &pcaps {
            let key = (p.clone(), format!("{:?}", expected.decode_as()));
            let outcome = analyses.entry(key).or_insert_with(|| {
                let engine =
                    lwarscope::proto::engine_with(TrackerConfig::default(), expected.decode_as());
                analyse_file(&root().join(p), engine, None).unwrap()
            });
            let diffs = expected.differences(&outcome.summary, outcome.capture.frames);
            if *t == p.replace(".pcap", ".truth.json") {
                assert_eq!(diffs, Vec::<String>::new(), "{p} with its own truth");
            } else if diffs.is_empty() {
                same.push(format!("{p} {t}"));
            } else {
                pairs += 1;
            }
        }
    }
    // The only exception: strs-clean and strs-wrap are the same play with
    // other settings (seed, first sequence number near the wrap), and their
    // truths state the same counts, which is all a truth asserts.
    assert_eq!(
        same,
        [
            "captures/strs-wrap.pcap captures/strs-clean.truth.json",
            "captures/strs-clean.pcap captures/strs-wrap.truth.json"
        ]
    );
    assert_eq!((truths.len(), pcaps.len()), (44, 47));
    assert_eq!(pairs, truths.len() * pcaps.len() - truths.len() - 2);
}

/// What a mismatch reads like, per kind of truth, and a file that is no truth
/// at all: one line saying what `--expect` takes.
#[test]
fn expect_names_each_difference_and_refuses_what_is_no_truth() {
    // A Starstrike capture with another Starstrike run's truth.
    let r = run(&[
        "captures/strs-clean.pcap",
        "--expect",
        "captures/strs-loss.truth.json",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout.starts_with("FAIL  captures/strs-clean.pcap: "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("session 10.0.1.1:50000 -> 10.0.0.1:7777 c2s.packets: expected"),
        "{}",
        r.stdout
    );
    // A Starstrike capture with a Battlegrounds truth.
    let r = run(&[
        "captures/strs-clean.pcap",
        "--expect",
        "captures/bg-clean.truth.json",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        "FAIL  captures/strs-clean.pcap: frames: expected 456, got 202; sessions: expected 2, \
         got 1; session 10.0.1.1:50000 -> 10.0.0.1:7777 state: expected established, got \
         disconnected; c2s.findings.disconnect-sent: expected 0, got 1; \
         s2c.findings.disconnect-sent: expected 0, got 1; s2c.messages.PROP: expected 30, \
         got 0 [expect captures/bg-clean.truth.json]\n"
    );
    // An lwar capture with a described protocol's truth.
    let r = run(&[
        "captures/sim-clean.pcap",
        "--expect",
        "captures/ksy-vessel-faults.truth.json",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        "FAIL  captures/sim-clean.pcap: frames: expected 537, got 483; session \
         10.0.2.1:40000 -> 10.0.0.1:7600: missing; session 127.0.0.2:50001 -> \
         127.0.0.1:32422: not expected; session 127.0.0.3:50002 -> 127.0.0.1:32422: not \
         expected [expect captures/ksy-vessel-faults.truth.json]\n"
    );
    // The mixed capture with its lwar half's truth alone: Starstrike's
    // sessions are not expected.
    let r = run(&[
        "captures/mixed-lwar-strs.pcap",
        "--expect",
        "captures/sim-clean.truth.json",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("messages.PlayerInput: expected 0, got 184")
            && r.stdout.contains("and 7 more differences"),
        "{}",
        r.stdout
    );

    // The truth's `-d` (Starstrike's server port) comes before the user's:
    // a `-d` of the same port wins.
    let r = run(&[
        "captures/strs-corrupt.pcap",
        "--expect",
        "captures/strs-corrupt.truth.json",
        "-d",
        "udp.port==7777,bg",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout.starts_with("FAIL  captures/strs-corrupt.pcap: "),
        "{}",
        r.stdout
    );

    // No truth at all: one line, exit 2, no verdict.
    let dir = tempfile::tempdir().unwrap();
    let takes = "--expect takes a simulator's *.truth.json (lwar, Starstrike, Battlegrounds, Vessel, \
                 described, mixed) or lwarscope's --format json output";
    let other = dir.path().join("other.json");
    std::fs::write(&other, "{\"name\": \"lwarscope\", \"version\": 1}\n").unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\"config\": {}, \"sessions\": [], \"findings\": {}}",
    )
    .unwrap();
    for (file, why) in [
        (
            "Cargo.toml".to_owned(),
            format!("not JSON (expected value at line 1 column 2): {takes}"),
        ),
        (
            other.display().to_string(),
            format!("not a ground truth or summary lwarscope knows: {takes}"),
        ),
        (
            broken.display().to_string(),
            "a Starstrike truth, but missing field `seed`".to_owned(),
        ),
    ] {
        let r = run(&["captures/sim-clean.pcap", "--expect", &file]);
        assert_eq!(r.code, Some(2), "{file}: {}", r.stdout);
        assert_eq!(r.stdout, "", "{file}");
        assert_eq!(r.stderr, format!("error: expected result {file}: {why}\n"));
    }
}

/// A rate written without `%` is a fraction: `loss=5` read as 500 % was a
/// gate that never fails. A bare number of 1 or more is refused with one line
/// naming the rule and suggesting `5%`, on the command line and in a rules
/// file, for every rate metric; `5%` and `0.05` still read as 5 %.
#[test]
fn a_rate_without_percent_above_one_is_refused_not_read_as_hundreds_of_percent() {
    for (flag, rule) in [
        ("--max", "loss=5"),
        ("--max", "resend-rate=5"),
        ("--min", "loss=1"),
        ("--max", "resend-rate=2.5"),
    ] {
        let r = run(&["captures/sim-loss.pcap", flag, rule]);
        assert_eq!(r.code, Some(2), "{rule}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, "", "{rule}");
        let (name, value) = rule.split_once('=').unwrap();
        let percent = (value.parse::<f64>().unwrap() * 100.0).round();
        let fraction = value.parse::<f64>().unwrap() / 100.0;
        assert_eq!(
            r.stderr,
            format!(
                "error: rule `{name}={value}`: a rate without `%` is a fraction, so \
                 {value} would be {percent}%: write `{value}%` for {value} percent (or \
                 `{fraction}` as a fraction)\n"
            ),
            "{rule}"
        );
    }
    // In a rules file: the same refusal, naming the file and the table.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[max]\nloss = 5\n").unwrap();
    let r = run(&["captures/sim-loss.pcap", "--rules", rules.to_str().unwrap()]);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "error: rules file {}: rule `[max] loss = 5`: a rate without `%` is a fraction, \
             so 5 would be 500%: write `5%` for 5 percent (or `0.05` as a fraction)\n",
            rules.display()
        )
    );
    std::fs::write(&rules, "[max]\nresend-rate = 12.5\n").unwrap();
    let r = run(&["captures/sim-loss.pcap", "--rules", rules.to_str().unwrap()]);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("rule `[max] resend-rate = 12.5`") && r.stderr.contains("write `12.5%`"),
        "{}",
        r.stderr
    );
    // Both forms that mean 5 % gate as 5 %: sim-loss's 11.11 % fails them.
    std::fs::write(&rules, "[max]\nloss = \"5%\"\n").unwrap();
    for args in [
        vec!["--max", "loss=5%"],
        vec!["--max", "loss=0.05"],
        vec!["--rules", rules.to_str().unwrap()],
    ] {
        let r = run(&[&["captures/sim-loss.pcap"][..], &args].concat());
        assert_eq!(r.code, Some(1), "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("loss is 11.11%, above 5.00%"),
            "{args:?}: {}",
            r.stdout
        );
    }
}

#[test]
fn an_endless_expected_result_is_refused_not_read_until_memory_runs_out() {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["check", "captures/sim-loss.pcap", "--expect", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/dev/zero") && stderr.contains("larger than 16 MiB"),
        "{stderr}"
    );
}

/// Sessions evicted to bound memory still count in every total a CI gate
/// reads: a capture cannot pass `--max resend-rate` or `--max sessions` by
/// having more sessions than the tracker holds.
#[test]
fn evicted_sessions_still_count_in_the_gates_metrics() {
    use lwarscope::capture::Source;
    use lwarscope::engine::TrackerConfig;
    use lwarscope::report::capture_info;
    use lwarscope::report::{Analysis, Outcome};
    use lwarscope::run::drive;
    // Three sessions one after the other: each client's packets exported to
    // its own file, the files read as one stream.
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["50001", "50002", "50003"]
        .iter()
        .map(|port| {
            let out = dir.path().join(format!("{port}.pcapng"));
            Command::cargo_bin("lwarscope")
                .unwrap()
                .args(["-r", "captures/sim-loss.pcap", "-f"])
                .arg(format!("udp port {port}"))
                .arg("-w")
                .arg(&out)
                .assert()
                .success();
            out
        })
        .collect();
    let run = |config: TrackerConfig| -> Outcome {
        let mut source = Source::files(&files).unwrap();
        let mut analysis = Analysis::with_engine(lwarscope::proto::engine(config), ());
        drive(&mut source, &mut analysis, None, None).unwrap();
        analysis
            .finish(capture_info(&source.stats(), &files, None))
            .0
    };
    let all = run(TrackerConfig::default());
    let few = run(TrackerConfig {
        max_sessions: 1,
        ..TrackerConfig::default()
    });
    assert_eq!(all.summary.session_count(), 3);
    assert_eq!(few.summary.sessions.len(), 1, "only one session held");
    assert_eq!(few.summary.session_count(), 3, "the evicted ones counted");
    assert!(all.resend_rate() > 0.0);
    assert_eq!(few.resend_rate(), all.resend_rate());
    assert_eq!(few.summary.findings, all.summary.findings);
    let evicted = few.summary.evicted.expect("evictions are reported");
    assert_eq!(evicted.sessions, 2);
    // The worst-of metrics see the evicted sessions too: their ack delays,
    // jitter, loss and unacked messages were folded in when they left.
    // Regression: only the sessions still held were measured.
    use lwarscope::report::check::{Allowed, Metric};
    let allowed = Allowed::default();
    for metric in [
        Metric::AckDelayP50,
        Metric::AckDelayP95,
        Metric::Jitter,
        Metric::Unacked,
        Metric::Loss,
        Metric::Sessions,
        Metric::ResendRate,
    ] {
        let (a, f) = (metric.value(&all, &allowed), metric.value(&few, &allowed));
        assert!(
            a > 0.0,
            "{metric:?} is 0 on the whole capture: the check proves nothing"
        );
        assert!(
            (a - f).abs() <= 1e-6 * a,
            "{metric:?}: {a} held, {f} with evictions"
        );
    }
}

#[test]
fn json_verdicts_carry_what_was_measured() {
    let r = run(&[
        "captures/sim-loss.pcap",
        "captures/sim-reorder.pcap",
        "no-such.pcap",
        "--max",
        "resend-rate=5%",
        "--deny",
        "malformed",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(2));
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["type"], "check");
    assert_eq!(doc["exit_code"], 2);
    assert_eq!(
        (
            doc["passed"].clone(),
            doc["failed"].clone(),
            doc["errors"].clone()
        ),
        (1.into(), 1.into(), 1.into())
    );
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files[0]["verdict"], "pass");
    let rate = &files[0]["rules"][1];
    assert_eq!(rate["rule"], "max resend-rate=5%");
    assert_eq!(rate["metric"], "resend-rate");
    assert_eq!(rate["measured"], "2.78%");
    assert_eq!(rate["limit"], "<= 5.00%");
    assert!((rate["value"].as_f64().unwrap() - 0.0278).abs() < 0.0001);
    assert!(rate["failure"].is_null());
    assert_eq!(files[1]["verdict"], "fail");
    assert_eq!(
        files[1]["rules"][1]["failure"],
        "resend-rate is 5.96%, above 5.00%"
    );
    assert_eq!(files[2]["verdict"], "error");
    assert_eq!(files[2]["file"], "no-such.pcap");
    assert!(!files[2]["error"].as_str().unwrap().is_empty());
}

#[test]
fn a_check_with_no_rules_warns() {
    let r = run(&["captures/sim-loss.pcap"]);
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stdout, "PASS  captures/sim-loss.pcap (0 rules)\n");
    assert_eq!(
        r.stderr,
        "warning: no rules: every readable capture with packets of a known protocol passes; add --deny, --max, --min, --rules or --expect\n"
    );
}

#[test]
fn junit_cases_carry_the_measured_value() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("check.xml");
    let r = run(&[
        "captures/sim-loss.pcap",
        "--max",
        "ack-delay-p95=250ms",
        "--junit",
        xml.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0));
    let text = std::fs::read_to_string(&xml).unwrap();
    assert!(
        text.contains("<system-out>ack-delay-p95 99.3 ms &lt;= 250.0 ms</system-out>"),
        "{text}"
    );
}

/// The summary `-r FILE --window W --format json` gives.
fn window_summary(file: &str, window: &str) -> serde_json::Value {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .args(["-r", file, "--window", window, "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["summary"].clone()
}

#[test]
fn a_window_is_judged_as_the_report_counts_it() {
    // sim-loss's seconds 2 to 4: 13 input gaps and 2 resends (58 and 6 in the
    // whole file), as `-r --window 2..4` counts them.
    let part = window_summary("captures/sim-loss.pcap", "2..4");
    assert_eq!(part["findings"]["input-gap"], 13);
    assert_eq!(part["findings"]["resend"], 2);
    let r = run(&[
        "captures/sim-loss.pcap",
        "--window",
        "2..4",
        "--max",
        "input-gap=13",
        "--max",
        "resend=2",
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "PASS  captures/sim-loss.pcap [window 2..4] (2 rules): input-gap 13 <= 13, resend 2 <= 2\n"
    );
    let r = run(&[
        "captures/sim-loss.pcap",
        "--window",
        "2..4",
        "--max",
        "input-gap=12",
    ]);
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("input-gap is 13, above 12"),
        "{}",
        r.stdout
    );
    // The whole file, for comparison: the window is what made it pass.
    let r = run(&["captures/sim-loss.pcap", "--max", "input-gap=13"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.contains("input-gap is 58"), "{}", r.stdout);
    // The JSON verdicts name the window, and measure what the report counts
    // in it; a window that is no window is refused.
    let r = run(&[
        "captures/sim-loss.pcap",
        "--window",
        "5..",
        "--max",
        "input-gap=100",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["files"][0]["window"], "5..");
    let later = window_summary("captures/sim-loss.pcap", "5..");
    assert!(later["findings"]["input-gap"].as_u64().unwrap() > 0);
    assert_eq!(
        doc["files"][0]["rules"][0]["value"].as_f64(),
        later["findings"]["input-gap"].as_f64()
    );
    // The JUnit suite names the window too, as the verdict line does.
    let (r, suites) = run_junit(&[
        "captures/sim-loss.pcap",
        "--window",
        "2..4",
        "--max",
        "input-gap=13",
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let suite = &suites.suites[0];
    assert_eq!(suite.name, "captures/sim-loss.pcap [window 2..4]");
    assert_eq!(
        suite.properties.hashmap.get("window").map(String::as_str),
        Some("2..4")
    );
    assert!(suite.cases[0].status.is_success());
    let r = run(&["captures/sim-loss.pcap", "--window", "4", "--deny", "lost"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "error: invalid value '4' for '--window <START..END>': a window is START..END"
        ),
        "{}",
        r.stderr
    );
}

/// A fault-free capture at a tap beside the server, its clients 30 to 80 ms
/// beyond it (`captures/sim-tap-far.pcap`): the clients' repeats that crossed
/// the server's ack in flight are notes, not `spurious-resend` warnings (44
/// before the rule: a repeat is spurious only once the ack had a round trip
/// between the tap and its sender to reach it). Nothing above a note.
#[test]
fn a_far_tap_shows_no_spurious_resend_on_a_fault_free_capture() {
    let r = run(&[
        "captures/sim-tap-far.pcap",
        "--deny",
        "spurious-resend,reordered,lost,malformed,violation",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .args(["-r", "captures/sim-tap-far.pcap", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["summary"]["findings"],
        serde_json::json!({"expected-repeat": 3, "repeat": 229, "resend": 7})
    );
    // Every one of them a note.
    let list = Command::cargo_bin("lwarscope")
        .unwrap()
        .arg("--list-findings")
        .output()
        .unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    for kind in ["repeat", "resend", "lwar.expected-repeat"] {
        let line = list
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .unwrap();
        assert_eq!(line.split_whitespace().nth(2), Some("note"), "{line}");
    }
    // sim-reorder's former spurious resends were repeats in packets overtaken on
    // the way, or captured less than a round trip after the ack: none is proven.
    // sim-corrupt's 3 came more than a round trip after the ack, but their acks
    // were captured only in packets that do not decode whole (which the
    // simulated receiver drops): whether a receiver reads the ack of such a
    // packet, the capture cannot tell, so they are unconfirmed repeats now
    // (issue 30), not warnings.
    let r = run(&["captures/sim-reorder.pcap", "--deny", "spurious-resend"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    let r = run(&["captures/sim-corrupt.pcap", "--max", "spurious-resend=0"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
}
