//! The traffic no protocol recognised, explained: the report's paragraph of
//! the busiest ports with what each protocol's decoder makes of them, the one
//! line `--packets`, `-T fields` and `check` write on standard error, and the
//! capture table's row that names every protocol looked for.

use crate::common;

use common::lwarscope;

const MIDSESSION: &str = "captures/bg-midsession.pcap";

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = lwarscope().args(args).output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

/// A Battlegrounds capture begun after its handshakes: the report says which
/// port decodes as what, and the exact `-d` to try.
#[test]
fn the_report_names_the_busiest_ports_and_the_d_to_try() {
    let (stdout, stderr, code) = run(&["-r", MIDSESSION, "--color", "never"]);
    assert_eq!(code, Some(0));
    assert_eq!(stderr, "");
    assert!(
        stdout.contains(
            "│ packets of a known protocol ┆ 0 (lwar, strs, bg, vessel, vessel_fixed, timewarp, strs_ksy) │\n"
        ),
        "{stdout}"
    );
    let tail = &stdout[stdout.find("\n\nSkipped").unwrap() + 2..];
    assert_eq!(
        tail,
        "Skipped UDP traffic, 224 datagrams of no known protocol; its busiest ports (decoders tried on up to\n\
         256 of each):\n\
         \x20 port 7777: 224 datagrams, 100 % decode as Battlegrounds: try -d udp.port==7777,bg\n\
         \x20 port 40000: 112 datagrams, 100 % decode as Battlegrounds: try -d udp.port==40000,bg\n\
         \x20 port 40001: 112 datagrams, 100 % decode as Battlegrounds: try -d udp.port==40001,bg\n\
         \n\
         No sessions: no packet of a known protocol.\n"
    );
    // What it suggests works: every datagram is then Battlegrounds'.
    let (stdout, _, code) = run(&["-r", MIDSESSION, "-d", "udp.port==7777,bg"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("│ Battlegrounds packets   ┆ 224 "),
        "{stdout}"
    );
    assert!(!stdout.contains("Skipped UDP traffic"), "{stdout}");
}

const HINT: &str = "lwarscope: 224 UDP datagrams of no known protocol skipped; port 7777: 224 \
                    datagrams, 100 % decode as Battlegrounds: try -d udp.port==7777,bg\n";

#[test]
fn packet_lines_and_fields_say_it_in_one_line_on_stderr() {
    for args in [
        &["--packets"][..],
        &["-V"],
        &["-T", "fields", "-e", "frame.number"],
    ] {
        let mut all = vec!["-r", MIDSESSION];
        all.extend_from_slice(args);
        let (stdout, stderr, code) = run(&all);
        assert_eq!(code, Some(0), "{args:?}");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(stderr, HINT, "{args:?}");
    }
    // The report and JSON say it their own way, not on stderr.
    for args in [&["--format", "json"][..], &["--format", "jsonl"]] {
        let mut all = vec!["-r", MIDSESSION];
        all.extend_from_slice(args);
        let (_, stderr, _) = run(&all);
        assert_eq!(stderr, "", "{args:?}");
    }
}

/// Traffic no decoder reads beside a game that was recognised (sim-corrupt's
/// datagrams to the discard port) is shown in the report, but is no reason
/// for a line on stderr.
#[test]
fn noise_beside_a_recognised_game_is_only_counted() {
    let (stdout, stderr, _) = run(&["-r", "captures/sim-corrupt.pcap", "--packets"]);
    assert!(!stdout.is_empty());
    assert_eq!(stderr, "");
    let (stdout, _, _) = run(&["-r", "captures/sim-corrupt.pcap", "--color", "never"]);
    let at = stdout.find("Skipped UDP traffic").unwrap();
    let paragraph = &stdout[at..stdout[at..].find("\n\n").unwrap() + at];
    assert_eq!(
        paragraph,
        "Skipped UDP traffic, 27 datagrams of no known protocol; its busiest ports (decoders tried on up to\n\
         256 of each):\n\
         \x20 port 9: 27 datagrams, no protocol decodes any\n\
         \x20 port 40001: 10 datagrams, no protocol decodes any\n\
         \x20 port 40002: 9 datagrams, no protocol decodes any\n\
         \x20 port 40003: 8 datagrams, no protocol decodes any"
    );
}

/// A capture of lwar with a Battlegrounds match on a port it does not know:
/// `check` passes it, and says on stderr what the other traffic is.
#[test]
fn check_says_it_on_stderr_for_a_capture_that_passes() {
    let dir = tempfile::tempdir().unwrap();
    let both = dir.path().join("both.pcap");
    let both = both.to_str().unwrap();
    let (_, stderr, code) = run(&[
        "-r",
        "captures/sim-clean.pcap",
        MIDSESSION,
        "--merge",
        "-w",
        both,
        "-F",
        "pcap",
        "-q",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let (stdout, stderr, code) = run(&["check", both, "--deny", "malformed"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout, format!("PASS  {both} (1 rule): malformed 0\n"));
    assert_eq!(
        stderr,
        format!("lwarscope: {both}: {}", &HINT["lwarscope: ".len()..])
    );
    // With nothing recognised, the verdict says it (and stderr does not again).
    let (stdout, stderr, code) = run(&["check", MIDSESSION, "--deny", "malformed"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stdout,
        "ERROR captures/bg-midsession.pcap: no packet of a known protocol among 224 UDP \
         datagrams; port 7777: 224 datagrams, 100 % decode as Battlegrounds: try -d \
         udp.port==7777,bg\n"
    );
    assert_eq!(stderr, "");
}
