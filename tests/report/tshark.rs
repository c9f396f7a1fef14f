//! The commands a tshark user types first: protocol names as display
//! filters, `-n`, `-l`, `-T json`, `-T ek`, the nearest name for a mistyped
//! `-e` or `check --deny`, `-i IFACE -w FILE -q`, and the frame's lengths
//! (`frame.len`, `frame.cap_len`) as tshark gives them.

use crate::common;
use crate::program;

use common::{Fx, lwarscope, write_pcap};
use lwarscope::capture::synth::{Link, frame, udp_fragments, udp_frame};
use lwarscope::capture::{FrameClass, LinkType, Source};
use std::path::Path;

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let out = lwarscope().args(args).output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

/// The frame numbers `-T fields` prints for a filter.
fn frames(capture: &str, filter: &str) -> Vec<u64> {
    let (stdout, stderr, code) = run(&[
        "-r",
        capture,
        "-Y",
        filter,
        "-T",
        "fields",
        "-e",
        "frame.number",
    ]);
    assert_eq!(code, Some(0), "{filter}: {stderr}");
    stdout.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn a_protocols_name_is_a_display_filter() {
    let mixed = "captures/mixed-lwar-strs.pcap";
    let all = frames(mixed, "udp");
    let lwar = frames(mixed, "lwar");
    let strs = frames(mixed, "strs");
    assert!(!lwar.is_empty() && !strs.is_empty());
    assert_eq!(lwar.len() + strs.len(), all.len());
    assert_eq!(frames(mixed, "!lwar"), strs);
    assert_eq!(frames(mixed, "starstrike"), strs);
    assert_eq!(frames(mixed, "lwar || strs"), all);
    assert_eq!(frames(mixed, "ip"), all);
    assert!(frames(mixed, "ipv6").is_empty());
    assert!(frames(mixed, "bg").is_empty());
    assert_eq!(frames("captures/sim-ipv6.pcap", "ipv6").len(), 301);
    assert!(frames("captures/sim-ipv6.pcap", "ip").is_empty());
    assert_eq!(frames("captures/bg-clean.pcap", "bg").len(), 456);
    assert_eq!(
        frames("captures/ksy-vessel-faults.pcap", "vessel_fixed"),
        frames("captures/ksy-vessel-faults.pcap", "udp")
    );
    // udp.length: the header's 8 bytes and the payload; frame 1 of sim-clean
    // carries 25 bytes of lwar.
    assert_eq!(
        frames("captures/sim-clean.pcap", "udp.length == 33 && frame == 1"),
        [1]
    );
    assert_eq!(
        frames("captures/sim-clean.pcap", "len == 25 && frame == 1"),
        [1]
    );
    // frame.len: the Ethernet frame's 14 + 20 + 8 bytes of headers and the payload.
    assert_eq!(
        frames(
            "captures/sim-clean.pcap",
            "frame.len == 67 && frame.cap_len == 67 && frame < 10"
        ),
        [1]
    );
}

/// `-e frame.number -e frame.len -e frame.cap_len`, by lwarscope or tshark:
/// one `(number, len, cap_len)` per line.
fn lengths(out: &[u8]) -> Vec<(u64, u32, u32)> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            assert_eq!(v.len(), 3, "{l}");
            (
                v[0].parse().unwrap(),
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
            )
        })
        .collect()
}

/// lwarscope's `frame.len` and `frame.cap_len` of every packet it shows, and
/// tshark's of every frame: the same for every frame lwarscope shows; with
/// `all`, lwarscope shows every frame.
fn agrees_with_tshark(capture: &Path, all: bool) -> Vec<(u64, u32, u32)> {
    let args = [
        "-r",
        capture.to_str().unwrap(),
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "frame.len",
        "-e",
        "frame.cap_len",
    ];
    let ours = lwarscope().args(args).output().unwrap();
    assert!(ours.status.success(), "{capture:?}");
    let ours = lengths(&ours.stdout);
    // Not skipped when tshark is missing: CI installs it (.ci/run).
    let theirs = program::program("tshark")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{capture:?}");
    let theirs = lengths(&theirs.stdout);
    assert!(!ours.is_empty(), "{capture:?}");
    if all {
        assert_eq!(ours, theirs, "{capture:?}");
    }
    for o in &ours {
        let t = theirs.iter().find(|t| t.0 == o.0);
        assert_eq!(Some(o), t, "{capture:?}");
    }
    ours
}

#[test]
fn frame_len_and_cap_len_are_tsharks_frame_for_frame() {
    for capture in [
        "captures/sim-clean.pcap",
        "captures/sim-ipv6.pcap",
        "captures/strs-loss.pcap",
        "captures/bg-clean.pcap",
        "captures/ksy-vessel-faults.pcap",
    ] {
        let _ = agrees_with_tshark(Path::new(capture), true);
    }
    // The shipped captures' frames are whole and unpadded; real ones are not
    // always. sim-clean's datagrams, framed four ways: whole, with a trailer
    // after the IP packet (Ethernet padding), cut by the snaplen inside the
    // payload, and in IP fragments (the datagram is the last fragment's
    // frame's); over Ethernet and Linux cooked capture.
    let mut source = Source::files(&["captures/sim-clean.pcap"]).unwrap();
    let mut datagrams = Vec::new();
    while let Some(f) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = f.class
            && datagrams.len() < 40
        {
            datagrams.push(d.to_owned_datagram());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for (link, file_link) in [
        (Link::Ethernet, LinkType::Ethernet),
        (Link::LinuxSll(1), LinkType::LinuxSll),
    ] {
        let mut frames = Vec::new();
        for (i, d) in datagrams.iter().enumerate() {
            let ms = i as u64 * 10;
            let whole = udp_frame(link, d.src, d.dst, &d.payload);
            match i % 4 {
                0 => frames.push(Fx::whole(ms, whole)),
                1 => frames.push(Fx::whole(ms, [&whole[..], &[0; 6]].concat())),
                2 => {
                    let keep = whole.len() - 5;
                    frames.push(Fx::cut(ms, whole, keep));
                }
                _ => {
                    for f in udp_fragments(d.src, d.dst, i as u32, &d.payload, 16) {
                        frames.push(Fx::whole(ms, frame(link, &f)));
                    }
                }
            }
        }
        let path = dir.path().join(format!("{link:?}.pcap"));
        write_pcap(&path, file_link, &frames);
        let ours = agrees_with_tshark(&path, false);
        // Every datagram shown, each way framed.
        assert_eq!(ours.len(), datagrams.len(), "{link:?}");
        let headers = if link == Link::Ethernet { 42 } else { 44 };
        for (i, ((_, len, cap_len), d)) in ours.iter().zip(&datagrams).enumerate() {
            let whole = (headers + d.payload.len()) as u32;
            let want = match i % 4 {
                0 => (whole, whole),
                1 => (whole + 6, whole + 6),
                2 => (whole, whole - 5),
                // The last fragment: 8 bytes or more of the datagram.
                _ => (*len, *len),
            };
            assert_eq!((*len, *cap_len), want, "{link:?} {i}");
            if i % 4 == 3 {
                assert!(*len < whole, "{link:?} {i}");
            }
        }
    }
}

#[test]
fn n_and_l_are_accepted_and_change_nothing_printed() {
    let base = run(&["-r", "captures/sim-loss.pcap", "--packets"]);
    assert_eq!(base.2, Some(0));
    for extra in [&["-n"][..], &["-l"], &["-n", "-l"]] {
        let mut args = vec!["-r", "captures/sim-loss.pcap", "--packets"];
        args.extend_from_slice(extra);
        assert_eq!(run(&args), base, "{extra:?}");
    }
}

#[test]
fn t_json_is_tsharks_array_with_lwarscopes_layers() {
    let (stdout, stderr, code) = run(&[
        "-r",
        "captures/sim-clean.pcap",
        "-T",
        "json",
        "-Y",
        "frame == 1",
    ]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert_eq!(
        stdout,
        r#"[
  {
    "_index": "packets-2023-11-14",
    "_type": "doc",
    "_score": null,
    "_source": {
      "layers": {
        "frame": {
          "frame.number": "1",
          "frame.time_epoch": "1700000000.100200000",
          "frame.time_relative": "0.000000000",
          "frame.len": "67",
          "frame.cap_len": "67",
          "frame.protocols": "ip:udp:lwar"
        },
        "ip": {
          "ip.src": "127.0.0.2",
          "ip.dst": "127.0.0.1"
        },
        "udp": {
          "udp.srcport": "50001",
          "udp.dstport": "32422",
          "udp.length": "33"
        },
        "lwar": {
          "lwar.app_id": "0xf27087c5",
          "lwar.ack": "0",
          "lwar.timestamp": "100",
          "lwar.type": "Connect",
          "lwar.seqno": "1",
          "lwar.name_len": "7",
          "lwar.name": "player1"
        },
        "lwarscope": {
          "lwarscope.session": "0",
          "lwarscope.dir": "c2s"
        }
      }
    }
  }
]
"#
    );
    // Every packet of a capture of each protocol parses, as one array.
    for capture in [
        "captures/sim-loss.pcap",
        "captures/strs-loss.pcap",
        "captures/bg-loss.pcap",
        "captures/ksy-vessel-faults.pcap",
        "captures/ksy-timewarp-faults.pcap",
    ] {
        let (stdout, _, code) = run(&["-r", capture, "-T", "json"]);
        assert_eq!(code, Some(0));
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let (fields, _, _) = run(&["-r", capture, "-T", "fields", "-e", "frame.number"]);
        assert_eq!(
            doc.as_array().unwrap().len(),
            fields.lines().count(),
            "{capture}"
        );
    }
    // No packet: an empty array.
    let (stdout, _, _) = run(&["-r", "captures/sim-clean.pcap", "-T", "json", "-Y", "bg"]);
    assert_eq!(stdout, "[\n]\n");
}

#[test]
fn t_ek_is_an_index_line_and_a_packet_line_per_packet() {
    let (stdout, stderr, code) = run(&[
        "-r",
        "captures/sim-clean.pcap",
        "-T",
        "ek",
        "-Y",
        "frame == 2",
    ]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert_eq!(
        stdout,
        concat!(
            r#"{"index":{"_index":"packets-2023-11-14","_type":"doc"}}"#,
            "\n",
            r#"{"timestamp":"1700000000101","layers":{"frame":{"frame_frame_number":"2","frame_frame_time_epoch":"1700000000.101200000","frame_frame_time_relative":"0.001000000","frame_frame_len":"90","frame_frame_cap_len":"90","frame_frame_protocols":"ip:udp:lwar"},"ip":{"ip_ip_src":"127.0.0.1","ip_ip_dst":"127.0.0.2"},"udp":{"udp_udp_srcport":"32422","udp_udp_dstport":"50001","udp_udp_length":"56"},"lwar":{"lwar_lwar_app_id":"0xf27087c5","lwar_lwar_ack":"1","lwar_lwar_timestamp":"101","lwar_lwar_type":["Join","Synced","Add"],"lwar_lwar_seqno":["1","2","3"],"lwar_lwar_player":["1:1","1:1"],"lwar_lwar_name_len":"7","lwar_lwar_name":"player1","lwar_lwar_entity":"1:1","lwar_lwar_add_type_id":"1"},"lwarscope":{"lwarscope_lwarscope_session":"0","lwarscope_lwarscope_dir":"s2c"}}}"#,
            "\n"
        )
    );
    // Findings ride in the lwarscope layer.
    let (stdout, _, _) = run(&["-r", "captures/sim-loss.pcap", "-T", "ek", "-Y", "resend"]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() >= 2 && lines.len().is_multiple_of(2));
    for pair in lines.chunks(2) {
        let index: serde_json::Value = serde_json::from_str(pair[0]).unwrap();
        assert_eq!(index["index"]["_type"], "doc");
        let packet: serde_json::Value = serde_json::from_str(pair[1]).unwrap();
        let found = &packet["layers"]["lwarscope"]["lwarscope_lwarscope_finding"];
        let labels: Vec<&str> = match found {
            serde_json::Value::Array(a) => a.iter().map(|v| v.as_str().unwrap()).collect(),
            v => vec![v.as_str().unwrap()],
        };
        assert!(labels.contains(&"resend"), "{labels:?}");
    }
}

#[test]
fn t_json_refuses_what_it_cannot_carry_in_one_line() {
    for (args, error) in [
        (
            &["-T", "json", "-e", "frame.number"][..],
            "error: -e and -E apply to -T fields; -T json writes every field: drop them\n",
        ),
        (
            &["-T", "ek", "--format", "jsonl"],
            "error: -T ek is an output of its own: drop --format\n",
        ),
        (
            &["-T", "json", "-V"],
            "error: -V prints packet lines; -T json prints the packets as JSON: drop one of them\n",
        ),
    ] {
        let mut all = vec!["-r", "captures/sim-clean.pcap"];
        all.extend_from_slice(args);
        let (stdout, stderr, code) = run(&all);
        assert_eq!(
            (stdout.as_str(), stderr.as_str(), code),
            ("", error, Some(2))
        );
    }
    // Each file of a fleet run on its own: arrays one after the other would
    // not be one JSON document (-T ek's lines would be, and are allowed).
    let (stdout, stderr, code) = run(&["-r", "captures/sim-clean.pcap", "-j", "2", "-T", "json"]);
    assert_eq!(
        (stdout.as_str(), stderr.as_str(), code),
        (
            "",
            "error: -T json writes one array of one stream's packets: name the files without -j, a directory or a glob, or use -T ek\n",
            Some(2)
        )
    );
    let (stdout, _, code) = run(&["-r", "captures/sim-clean.pcap", "-j", "2", "-T", "ek"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout.lines().count(), 2 * 483);
}

#[test]
fn e_and_deny_suggest_the_nearest_name() {
    let (_, stderr, code) = run(&[
        "-r",
        "captures/sim-clean.pcap",
        "-T",
        "fields",
        "-e",
        "frame.numbr",
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: -e frame.numbr: no such field (see --list-fields, and --help for frame.*, ip.*, \
         udp.*, lwarscope.*); did you mean `frame.number`?\n"
    );
    let (_, stderr, _) = run(&[
        "-r",
        "captures/sim-clean.pcap",
        "-T",
        "fields",
        "-e",
        "lwar.seqnum",
    ]);
    assert!(
        stderr.ends_with("; did you mean `lwar.seqno`?\n"),
        "{stderr}"
    );
    let (stdout, stderr, code) = run(&["check", "captures/sim-clean.pcap", "--deny", "resends"]);
    assert_eq!((stdout.as_str(), code), ("", Some(2)));
    assert!(
        stderr.ends_with("; did you mean `resend`?\n") && stderr.lines().count() == 1,
        "{stderr}"
    );
    let (_, stderr, _) = run(&["check", "captures/sim-clean.pcap", "--max", "resend-rat=5%"]);
    assert!(
        stderr.ends_with("; did you mean `resend-rate`?\n"),
        "{stderr}"
    );
}

/// `-i IFACE -w FILE -q`: the capture is recorded, nothing printed.
#[test]
fn a_live_capture_records_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("match.pcap");
    let (stdout, stderr, code) = run(&[
        "-i",
        "lo",
        "-f",
        "udp port 9",
        "-w",
        file.to_str().unwrap(),
        "-q",
        "-a",
        "0.5",
    ]);
    assert_eq!(
        (stdout.as_str(), stderr.as_str(), code),
        ("", "", Some(0)),
        "live capture on lo needs root"
    );
    let header = std::fs::read(&file).unwrap();
    // libpcap's savefile, with nanosecond timestamps.
    assert_eq!(&header[..4], &[0x4d, 0x3c, 0xb2, 0xa1], "a pcap file");
}

/// `-V`: every protocol's header and messages (or a described protocol's
/// packet) say where they lie in the payload, alike (the nodes below them
/// too: `fields::every_protocols_tree_says_where_each_node_lies`).
#[test]
fn v_shows_each_top_nodes_bytes_and_offset_for_every_protocol() {
    for (capture, frame, lines) in [
        (
            "captures/sim-clean.pcap",
            "2",
            &[
                "    header (12 bytes at offset 0)",
                "    Join#1 (17 bytes at offset 12)",
                "    Synced#2 (5 bytes at offset 29)",
                "    Add#3 (14 bytes at offset 34)",
            ][..],
        ),
        (
            "captures/strs-clean.pcap",
            "1",
            &[
                "    header (12 bytes at offset 0)",
                "    ConnectionRequest (41 bytes at offset 12)",
            ],
        ),
        (
            "captures/bg-clean.pcap",
            "1",
            &[
                "    header (8 bytes at offset 0)",
                "    AUTH (0 bytes at offset 8)",
            ],
        ),
        (
            "captures/ksy-vessel-faults.pcap",
            "1",
            &["    vessel_fixed (17 bytes at offset 0)"],
        ),
        (
            "captures/ksy-timewarp-faults.pcap",
            "1",
            &["    timewarp (1 byte at offset 0)"],
        ),
        (
            "captures/vessel-clean.pcap",
            "1",
            &["    vesselToEnvironment (23 bytes at offset 0)"],
        ),
    ] {
        let filter = format!("frame == {frame}");
        let (stdout, _, code) = run(&["-r", capture, "-V", "-Y", &filter]);
        assert_eq!(code, Some(0));
        let top: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
            .collect();
        assert_eq!(top, lines, "{capture}");
    }
}

/// `-l`: each packet's line reaches a pipe as soon as it is written, while
/// the capture is still being read (here: standard input left open after a
/// capture large enough for the reader to hand packets over before its end);
/// without it, up to 64 KiB wait in the output buffer, cut anywhere.
#[test]
fn l_flushes_each_line_into_a_pipe() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let pcap = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/captures/vessel-clean.pcap"
    ))
    .unwrap();
    // What reaches the pipe before the input ends: the bytes once nothing
    // more came for two seconds.
    let before_eof = |flag: Option<&str>| -> Vec<u8> {
        let mut args = vec!["-r", "-", "--packets"];
        args.extend(flag);
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lwarscope"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&pcap).unwrap();
        stdin.flush().unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let mut stdout = child.stdout.take().unwrap();
        let sink = got.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = (usize::MAX, Instant::now());
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            let len = got.lock().unwrap().len();
            if len != last.0 {
                last = (len, Instant::now());
            } else if len > 0 && last.1.elapsed() > Duration::from_secs(2) {
                break;
            }
        }
        let seen = got.lock().unwrap().clone();
        drop(stdin);
        assert!(child.wait().unwrap().success());
        reader.join().unwrap();
        seen
    };
    let flushed = before_eof(Some("-l"));
    let buffered = before_eof(None);
    assert!(flushed.ends_with(b"\n"), "-l writes whole lines");
    assert!(
        flushed.len() > buffered.len(),
        "-l: {} bytes before the end of input, without: {}",
        flushed.len(),
        buffered.len()
    );
}
