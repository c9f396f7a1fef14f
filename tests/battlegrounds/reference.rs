//! The reference implementation's own traffic (issue 31):
//! `captures/bg-reference-handshake.pcap`, 9 packets on loopback port 9999
//! (AUTH, AUTH_OK, PING 1, PONG 1, PING 2, PONG 2, server CLOSE, PING 3,
//! client CLOSE; session id 0x1234, big-endian). Its exact expected result:
//! one session, id 0x1234, no malformed packet, two PING/PONG round trips
//! with their RTT, closed by the server, no finding; recognised without a
//! flag.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Finding, Observer, TrackerConfig};
use lwarscope::proto;
use std::process::Command;

const PCAP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/captures/bg-reference-handshake.pcap"
);

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

fn lwarscope(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lwarscope"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_reference_handshake_reads_as_sent() {
    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Collect::default();
    let mut source = Source::files(&[PCAP]).unwrap();
    let mut frames = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            frames += 1;
            assert!(engine.observe(&d, &mut seen).is_some(), "frame {frames}");
        }
    }
    assert_eq!(frames, 9);
    let summary = engine.finish(&mut seen);
    assert!(seen.0.is_empty(), "{:?}", seen.0);
    assert_eq!(summary.sessions.len(), 1);
    let s = &summary.sessions[0];
    assert_eq!(s.state, "closed");
    assert!(summary.malformed.is_empty(), "{:?}", summary.malformed);
    let types: Vec<_> = summary
        .messages
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        types,
        [
            ("AUTH", 1),
            ("AUTH_OK", 1),
            ("CLOSE", 2),
            ("PING", 3),
            ("PONG", 2)
        ]
    );
}

#[test]
fn the_report_says_so_in_words() {
    let report = lwarscope(&["-r", PCAP]);
    assert!(report.contains("malformed               ┆ 0"), "{report}");
    // The session's paragraph, its lines wrapped at the report's width.
    let notes: Vec<&str> = report
        .lines()
        .skip_while(|l| *l != "Sessions:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(str::trim)
        .collect();
    assert_eq!(
        notes.join(" "),
        "0 bg: byte order big-endian (from the session id); session id 0x1234; \
         2 PING/PONG round trips: min 0.132 ms, mean 0.211 ms, max 0.291 ms; \
         closed by the server (CLOSE, frame 7): its idle timeout, no packet from \
         the client for 501 ms."
    );
    assert!(report.ends_with("No findings.\n"), "{report}");
}

#[test]
fn json_packet_lines_and_fields_show_the_session_as_sent() {
    let json: serde_json::Value =
        serde_json::from_str(&lwarscope(&["-r", PCAP, "--format", "json"])).unwrap();
    let s = &json["summary"]["sessions"][0];
    assert_eq!(s["state"], "closed");
    assert_eq!(
        s["notes"]["byte_order"],
        "byte order big-endian (from the session id)"
    );
    assert_eq!(s["notes"]["session_id"], "session id 0x1234");
    assert_eq!(s["c2s"]["ack_delay"]["samples"], 2);
    let lines = lwarscope(&["-r", PCAP, "-Y", "bg.session_id == 0x1234 && bg.ping.seq"]);
    let tokens: Vec<_> = lines
        .lines()
        .map(|l| l.split_whitespace().last().unwrap_or(""))
        .collect();
    assert_eq!(
        tokens,
        ["PING(1)", "PONG(1)", "PING(2)", "PONG(2)", "PING(3)"]
    );
    let close = lwarscope(&[
        "-r",
        PCAP,
        "-Y",
        "bg.close",
        "-T",
        "fields",
        "-e",
        "bg.byte_order",
    ]);
    assert_eq!(close, "big-endian\nbig-endian\n");
    // The user may force the order: read little-endian, the session id is
    // the 873594880 (0x34120000) it showed before (every other number of the
    // sample is 0 or a byte).
    let le = lwarscope(&["-r", PCAP, "-o", "bg.byte_order:le"]);
    assert!(
        le.contains(
            "byte order little-endian (from the user's preference); session id 0x34120000;"
        ),
        "{le}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_lwarscope"))
        .args(["-r", PCAP, "-o", "bg.byte_order:middle"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("bg.byte_order takes be, le, auto"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}
