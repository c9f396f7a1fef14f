//! `-T fields -e FIELD -E ...` and `-t FORMAT`, as a user runs them, against
//! tshark where tshark has the same notion.

use crate::common;
use crate::program;

use common::lwarscope;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Standard output of a successful run.
fn run(args: &[&str]) -> String {
    let out = lwarscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "lwarscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Standard error of a run that must be refused with exit status 2, one line.
fn refused(args: &[&str]) -> String {
    let out = lwarscope().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "lwarscope {args:?}");
    assert!(out.stdout.is_empty(), "no output when refused");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one-line error: {err}");
    err
}

const LOSS: &str = "captures/sim-loss.pcap";

#[test]
fn frame_fields_match_tshark() {
    let fields = [
        "-e",
        "frame.number",
        "-e",
        "frame.time_epoch",
        "-e",
        "ip.src",
        "-e",
        "udp.srcport",
    ];
    let mut args = vec!["-r", LOSS, "-T", "fields"];
    args.extend(fields);
    let ours = run(&args);
    // Not skipped when tshark is missing: CI installs it (.ci/run).
    let theirs = program::program("tshark")
        .current_dir(root())
        .args(["-r", LOSS, "-T", "fields"])
        .args(fields)
        .env("TZ", "UTC")
        .output()
        .expect("tshark is installed (.ci/run installs it)");
    assert!(theirs.status.success());
    let theirs = String::from_utf8(theirs.stdout).unwrap();
    assert!(theirs.lines().count() > 100);
    // tshark prints frame.time_epoch with nine digits (nanoseconds), as we do.
    assert!(
        ours.lines()
            .next()
            .unwrap()
            .contains("1700000000.100200000")
    );
    assert_eq!(ours, theirs);
}

#[test]
fn time_formats_match_tshark() {
    // tshark's one-line summaries start with the frame number and the time.
    for t in ["r", "a", "ad", "d", "dd", "e", "u", "ud"] {
        let ours = run(&["-r", LOSS, "--packets", "-t", t, "-c", "20"]);
        let theirs = program::program("tshark")
            .current_dir(root())
            .args(["-r", LOSS, "-t", t, "-c", "20"])
            .env("TZ", "UTC")
            .output()
            .expect("tshark is installed (.ci/run installs it)");
        let theirs = String::from_utf8(theirs.stdout).unwrap();
        let time = |line: &str| -> String {
            let mut w = line.split_whitespace();
            let frame = w.next().unwrap().to_owned();
            let first = w.next().unwrap().to_owned();
            // ad/ud: a date, then the time of day.
            if first.contains('-') {
                format!("{frame} {first} {}", w.next().unwrap())
            } else {
                format!("{frame} {first}")
            }
        };
        let ours: Vec<String> = ours.lines().map(time).collect();
        let theirs: Vec<String> = theirs.lines().map(time).collect();
        assert_eq!(ours.len(), 20, "-t {t}");
        assert_eq!(ours, theirs, "-t {t}");
    }
}

#[test]
fn delta_displayed_counts_from_the_previous_line_shown() {
    let out = run(&["-r", LOSS, "-t", "dd", "-Y", "frame == 1 || frame == 4"]);
    let times: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(times, ["0.000000", "0.100000"]);
    let out = run(&["-r", LOSS, "-t", "d", "-Y", "frame == 1 || frame == 4"]);
    let times: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(times, ["0.000000", "0.002000"]);
}

#[test]
fn repeated_fields_aggregate_and_occurrence_picks() {
    let base = [
        "-r",
        LOSS,
        "-Y",
        "frame == 2",
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "lwar.seqno",
        "-e",
        "lwar.type",
    ];
    assert_eq!(run(&base), "2\t1,2,3\tJoin,Synced,Add\n");
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        run(&a)
    };
    assert_eq!(with(&["-E", "occurrence=f"]), "2\t1\tJoin\n");
    assert_eq!(with(&["-E", "occurrence=l"]), "2\t3\tAdd\n");
    assert_eq!(
        with(&["-E", "aggregator=/s"]),
        "2\t1 2 3\tJoin Synced Add\n"
    );
    assert_eq!(
        with(&["-E", "separator=,", "-E", "aggregator=;"]),
        "2,1;2;3,Join;Synced;Add\n"
    );
    assert_eq!(with(&["-E", "separator=/s"]), "2 1,2,3 Join,Synced,Add\n");
    assert_eq!(
        with(&["-E", "quote=d"]),
        "\"2\"\t\"1,2,3\"\t\"Join,Synced,Add\"\n"
    );
    assert_eq!(
        with(&["-E", "quote=s"]),
        "'2'\t'1,2,3'\t'Join,Synced,Add'\n"
    );
    assert_eq!(
        with(&["-E", "header=y"]),
        "frame.number\tlwar.seqno\tlwar.type\n2\t1,2,3\tJoin,Synced,Add\n"
    );
}

#[test]
fn text_is_unquoted_and_session_fields_print() {
    let out = run(&[
        "-r",
        LOSS,
        "-Y",
        "frame == 1",
        "-T",
        "fields",
        "-e",
        "lwar.name",
        "-e",
        "lwarscope.session",
        "-e",
        "lwarscope.dir",
        "-e",
        "ip.dst",
        "-e",
        "udp.dstport",
        "-e",
        "frame.time_relative",
        "-e",
        "ipv6.src",
    ]);
    assert_eq!(out, "player1\t0\tc2s\t127.0.0.1\t32422\t0.000000000\t\n");
}

#[test]
fn findings_are_a_field_and_only_displayed_packets_print() {
    let out = run(&[
        "-r",
        LOSS,
        "-Y",
        "finding",
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "lwarscope.finding",
    ]);
    assert!(!out.is_empty());
    for line in out.lines() {
        let (_, findings) = line.split_once('\t').unwrap();
        assert!(!findings.is_empty(), "{line}");
    }
    // No tables with -T fields.
    assert!(!out.contains("Sessions") && !out.contains('│'));
}

#[test]
fn wire_text_never_writes_control_characters() {
    for file in [
        "captures/sim-corrupt.pcap",
        "captures/sim-clean.pcap",
        "captures/strs-corrupt.pcap",
        "captures/bg-corrupt.pcap",
    ] {
        let out = run(&[
            "-r",
            file,
            "-T",
            "fields",
            "-e",
            "lwar.name",
            "-e",
            "lwar.chat.text",
        ]);
        assert!(
            !out.chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{file}"
        );
    }
}

#[test]
fn bad_field_options_are_refused_in_one_line() {
    let e = refused(&["-r", LOSS, "-T", "fields", "-e", "lwar.nope"]);
    assert!(e.contains("lwar.nope"), "{e}");
    let e = refused(&["-r", LOSS, "-e", "frame.number"]);
    assert!(e.contains("-T fields"), "{e}");
    let e = refused(&["-r", LOSS, "-T", "fields"]);
    assert!(e.contains("-e"), "{e}");
    let e = refused(&[
        "-r",
        LOSS,
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-E",
        "quote=x",
    ]);
    assert!(e.contains("quote=x"), "{e}");
    let e = refused(&["-r", LOSS, "-T", "fields", "-e", "lwar.message"]);
    assert!(e.contains("lwar.message"), "{e}");
}

#[test]
fn help_documents_both_with_examples() {
    let help = run(&["--help"]);
    assert!(
        help.contains("lwarscope -r match.pcap -T fields -e frame.number -e lwar.seqno"),
        "{help}"
    );
    assert!(
        help.contains("lwarscope -r match.pcap --packets -t ud"),
        "{help}"
    );
    assert!(help.contains("occurrence=f|l|a"), "{help}");
}

#[test]
fn wireshark_filter_dialect_selects_what_tshark_selects() {
    for expr in [
        "ip.src == 127.0.0.0/8 && udp.dstport == 32422",
        "ip.addr == 127.0.0.3 and udp.srcport ge 32422",
        "frame.time_relative > 3 && frame.time_relative <= 4",
        "frame.number in {1, 3, 5..7, 880..890}",
        "udp.srcport in {50001, 50003} && frame.number < 60",
        "frame.time_epoch >= 1700000005.5",
        "udp.port == 50002 && !(frame.number > 100)",
    ] {
        let ours = run(&["-r", LOSS, "-Y", expr, "-T", "fields", "-e", "frame.number"]);
        let theirs = program::program("tshark")
            .current_dir(root())
            .args(["-r", LOSS, "-Y", expr, "-T", "fields", "-e", "frame.number"])
            .output()
            .expect("tshark is installed (.ci/run installs it)");
        assert!(theirs.status.success(), "tshark -Y {expr}");
        let theirs = String::from_utf8(theirs.stdout).unwrap();
        assert!(theirs.lines().count() >= 3, "{expr} selects some frames");
        assert_eq!(ours, theirs, "{expr}");
    }
}

/// A protocol's magic number is written the same way in every view and for
/// every protocol: hexadecimal, as tshark writes a hex field (Starstrike's
/// `protocolId` was raw bytes, `53545253`, and lwar's appId a decimal in
/// `-T fields` but hexadecimal under `-V`).
#[test]
fn magic_numbers_are_hexadecimal_in_every_view() {
    let fields =
        |pcap: &str, field: &str| run(&["-r", pcap, "-c", "1", "-T", "fields", "-e", field]);
    assert_eq!(
        fields("captures/sim-clean.pcap", "lwar.app_id"),
        "0xf27087c5\n"
    );
    assert_eq!(
        fields("captures/strs-clean.pcap", "strs.magic"),
        "0x53545253\n"
    );
    let tree = |pcap: &str| run(&["-r", pcap, "-c", "1", "-V"]);
    assert!(tree("captures/sim-clean.pcap").contains("\n      appId: 0xf27087c5\n"));
    assert!(tree("captures/strs-clean.pcap").contains("\n      protocolId: 0x53545253\n"));
    // A described protocol's `contents` too, in its tree (`-T fields` and
    // JSON give a described field's bytes as they are: `53545253`).
    let described = run(&[
        "-r",
        "captures/strs-clean.pcap",
        "-d",
        "udp.port==7777,strs_ksy",
        "-c",
        "1",
        "-V",
    ]);
    assert!(
        described.contains("\n      protocol_id: 0x53545253\n"),
        "{described}"
    );
    // And a number to the display filter, in either base.
    for filter in ["strs.magic == 0x53545253", "strs.magic == 1398035027"] {
        let lines = run(&["-r", "captures/strs-clean.pcap", "-c", "3", "-Y", filter]);
        assert_eq!(lines.lines().count(), 3, "{filter}");
    }
}

/// Every node of `-V`'s tree (the header, a message, a described protocol's
/// packet, and below them each structure whose fields follow) says where it
/// lies in the same form for every protocol: `label (N bytes at offset M)`.
/// Before, only the top nodes but the header did.
#[test]
fn every_protocols_tree_says_where_each_node_lies() {
    let tree = |args: &[&str]| run(&[args, &["-V"]].concat());
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["-r", "captures/sim-clean.pcap", "-c", "1"],
            &[
                "    header (12 bytes at offset 0)",
                "    Connect#1 (13 bytes at offset 12)",
            ],
        ),
        (
            &["-r", "captures/strs-clean.pcap", "-Y", "frame == 4"],
            &[
                "    header (12 bytes at offset 0)",
                "    WorldSnapshot (99 bytes at offset 12)",
                "      EntityState[0] (47 bytes at offset 17)",
                "      EntityState[1] (47 bytes at offset 64)",
            ],
        ),
        (
            &["-r", "captures/bg-clean.pcap", "-c", "1"],
            &[
                "    header (8 bytes at offset 0)",
                "    AUTH (0 bytes at offset 8)",
            ],
        ),
        (
            &["-r", "captures/vessel-clean.pcap", "-c", "1"],
            &[
                "    vesselToEnvironment (23 bytes at offset 0)",
                "      shipInput (14 bytes at offset 9)",
            ],
        ),
        (
            &[
                "-r",
                "captures/ksy-timewarp-faults.pcap",
                "-Y",
                "frame == 18",
            ],
            &[
                "    timewarp (102 bytes at offset 0)",
                "      body (101 bytes at offset 1)",
                "        ships[0] (25 bytes at offset 2)",
            ],
        ),
        (
            &[
                "-r",
                "captures/strs-clean.pcap",
                "-d",
                "udp.port==7777,strs_ksy",
                "-c",
                "1",
            ],
            &[
                "    strs_ksy (53 bytes at offset 0)",
                "      payload (41 bytes at offset 12)",
            ],
        ),
    ];
    let node = regex::Regex::new(r"^ {4,}\S.* \(\d+ bytes? at offset \d+\)$").unwrap();
    for (args, nodes) in cases {
        let out = tree(args);
        let lines: Vec<&str> = out.lines().collect();
        for want in nodes {
            assert!(lines.contains(want), "{args:?}: no {want:?} in\n{out}");
        }
        // Every other line under the packet's line is a field with its value
        // (`label: value`), a finding or why decoding stopped.
        for line in lines.iter().skip(1).filter(|l| !l.is_empty()) {
            let t = line.trim_start();
            assert!(
                node.is_match(line)
                    || t.contains(": ")
                    || t.starts_with("finding ")
                    || t.starts_with("undecodable: "),
                "{args:?}: {line:?}"
            );
        }
    }
}

/// A magic number reads the same whichever way the protocol is known, in
/// every view: Starstrike's `protocolId` natively (`strs.magic`) and as
/// `protocols/starstrike.ksy` describes it (`strs_ksy.protocol_id`, a
/// `contents`) is `0x53545253` in `-T fields`, `-T json`, `-T ek`, `-V` and
/// the message's text, and filters as the number. Before, the described one
/// was the bytes `53545253` everywhere but `-V`.
#[test]
fn a_magic_reads_the_same_natively_and_described() {
    let strs = ["-r", "captures/strs-clean.pcap", "-c", "1"];
    let ksy = [&strs[..], &["-d", "udp.port==7777,strs_ksy"]].concat();
    let native = |args: &[&str]| run(&[&strs[..], args].concat());
    let described = |args: &[&str]| run(&[&ksy[..], args].concat());
    assert_eq!(
        native(&["-T", "fields", "-e", "strs.magic"]),
        "0x53545253\n"
    );
    assert_eq!(
        described(&["-T", "fields", "-e", "strs_ksy.protocol_id"]),
        "0x53545253\n"
    );
    let line = |out: String, key: &str| {
        out.lines()
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .trim()
            .to_owned()
    };
    assert_eq!(
        line(native(&["-T", "json"]), "\"strs.magic\""),
        "\"strs.magic\": \"0x53545253\","
    );
    assert_eq!(
        line(described(&["-T", "json"]), "\"strs_ksy.protocol_id\""),
        "\"strs_ksy.protocol_id\": \"0x53545253\","
    );
    assert!(
        native(&["-T", "ek"]).contains("\"strs_strs_magic\":\"0x53545253\""),
        "native ek"
    );
    assert!(
        described(&["-T", "ek"]).contains("\"strs_ksy_strs_ksy_protocol_id\":\"0x53545253\""),
        "described ek"
    );
    assert_eq!(
        line(native(&["-V"]), "protocolId:"),
        "protocolId: 0x53545253"
    );
    assert_eq!(
        line(described(&["-V"]), "protocol_id:"),
        "protocol_id: 0x53545253"
    );
    assert!(
        described(&["--format", "jsonl"]).contains("\"text\":\"protocol_id=0x53545253 "),
        "the message's text"
    );
    // It filters and lists as the number native `strs.magic` is.
    for (args, field) in [
        (&strs[..], "strs.magic"),
        (&ksy[..], "strs_ksy.protocol_id"),
    ] {
        let out = run(&[args, &["-Y", &format!("{field} == 0x53545253")]].concat());
        assert_eq!(out.lines().count(), 1, "{field}");
    }
    let list = run(&["--list-fields"]);
    for field in ["strs.magic ", "strs_ksy.protocol_id "] {
        assert_eq!(
            line(list.clone(), field).split_whitespace().nth(1),
            Some("unsigned"),
            "{field}"
        );
    }
}
