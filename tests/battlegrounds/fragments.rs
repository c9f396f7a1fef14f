//! Battlegrounds in both byte orders over IP fragments: the corpus's captures
//! with blocks of messages split into blocks (`bg-be-bigmsg`, the reference's
//! big-endian form; `bg-bigmsg`, the little-endian one) written again with
//! every datagram over 120 bytes sent as IP fragments of at most 64 bytes of
//! data. Reassembled before any protocol sees them, they give exactly the
//! analysis of the unfragmented capture.

use lwarscope::capture::synth::{Link, PcapWriter, frame, udp_fragments, udp_frame};
use lwarscope::capture::{FrameClass, LinkType, Source};
use std::path::Path;
use std::process::Command;

fn json(pcap: &Path) -> serde_json::Value {
    let out = Command::new(assert_cmd::cargo::cargo_bin("lwarscope"))
        .arg("-r")
        .arg(pcap)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fragmented_datagrams_give_the_same_analysis_in_both_byte_orders() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["bg-be-bigmsg", "bg-bigmsg"] {
        let original = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("captures/{stem}.pcap"));
        let fragmented = dir.path().join(format!("{stem}-frag.pcap"));
        let mut w = PcapWriter::create(&fragmented, LinkType::Ethernet).unwrap();
        let mut source = Source::files(std::slice::from_ref(&original)).unwrap();
        let (mut datagrams, mut split) = (0, 0);
        while let Some(f) = source.next_frame().unwrap() {
            let FrameClass::Udp(d) = f.class else {
                panic!("{stem}: frame {} is not a whole UDP datagram", f.number);
            };
            datagrams += 1;
            if d.payload.len() > 120 {
                split += 1;
                for piece in udp_fragments(d.src, d.dst, datagrams, d.payload, 64) {
                    w.write(f.ts, &frame(Link::Ethernet, &piece));
                }
            } else {
                w.write(f.ts, &udp_frame(Link::Ethernet, d.src, d.dst, d.payload));
            }
        }
        w.finish().unwrap();
        assert!(split > 10, "{stem}: {split} datagrams split");
        let (mut a, mut b) = (json(&original), json(&fragmented));
        assert_eq!(b["capture"]["reassembled"], split, "{stem}");
        assert_eq!(b["capture"]["incomplete"], 0, "{stem}");
        // Frame numbers differ (a fragment is a frame): the CLOSE's frame is
        // the reassembled datagram's last fragment.
        for v in [&mut a, &mut b] {
            for s in v["summary"]["sessions"].as_array_mut().unwrap() {
                let closed = s["notes"]["closed_by"].take();
                // The little-endian form has no CLOSE.
                if let Some(closed) = closed.as_str() {
                    assert!(
                        closed.starts_with("closed by the client (CLOSE, frame "),
                        "{stem}: {closed}"
                    );
                }
            }
        }
        assert_eq!(a["summary"], b["summary"], "{stem}");
        let kinds = |v: &serde_json::Value| -> Vec<String> {
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["kind"].to_string())
                .collect()
        };
        assert_eq!(kinds(&a), kinds(&b), "{stem}: findings");
        // The sessions are read in their own byte order, fragments or not.
        let notes = |v: &serde_json::Value| v["summary"]["sessions"][0]["notes"].to_string();
        let order = if stem.starts_with("bg-be") {
            "big-endian"
        } else {
            "little-endian"
        };
        assert!(notes(&b).contains(order), "{stem}: {}", notes(&b));
    }
}
