//! The recorded corpus in `captures/`: every capture decodes, and every capture
//! with a ground-truth file (`NAME.truth.json`, written by the simulator from its
//! own causal knowledge) gives exactly that truth when run through the capture
//! front end and the tracker.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::Summary;
use lwarscope::proto::lwar::wire::Packet;
use std::path::{Path, PathBuf};

fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("captures/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pcap" | "pcapng")
            )
        })
        // Starstrike's corpus (`strs-*`) and the capture of lwar and
        // Starstrike together (`mixed-*`, whose truth holds both) are checked
        // by tests/starstrike/sim.rs, Battlegrounds' (`bg-*`) by
        // tests/battlegrounds/corpus.rs, the described protocols' (`ksy-*`)
        // by tests/described/captures.rs, Vessel's (`vessel-*`) by
        // tests/vessel/sim.rs.
        .filter(|p| {
            !p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("strs-")
                    || n.starts_with("mixed-")
                    || n.starts_with("bg-")
                    || n.starts_with("ksy-")
                    || n.starts_with("vessel-")
            })
        })
        .collect();
    files.sort();
    files
}

fn truth_of(capture: &Path) -> Option<Summary> {
    let stem = capture.file_stem()?.to_str()?;
    let path = capture.with_file_name(format!("{stem}.truth.json"));
    let text = std::fs::read_to_string(path).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).expect("truth file is JSON");
    Some(
        serde_json::from_value(doc["summary"].clone()).expect("truth summary has the Summary form"),
    )
}

/// Runs a capture through the front end and the tracker.
fn analyse(capture: &Path) -> (Summary, u64) {
    let mut source = Source::files(&[capture]).expect("capture opens");
    let mut engine = lwarscope::proto::engine(Default::default());
    while let Some(frame) = source.next_frame().expect("capture reads to the end") {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut ());
        }
    }
    (engine.finish(&mut ()), engine.recognised())
}

#[test]
fn the_corpus_is_there() {
    let files = captures();
    assert!(
        files.iter().any(|p| p.ends_with("real-server-clean.pcap")),
        "{files:?}"
    );
}

#[test]
fn every_capture_has_lwar_traffic_and_decodes_its_headers() {
    for capture in captures() {
        let mut source = Source::files(&[&capture]).expect("capture opens");
        let mut lwar = 0u64;
        let mut headers = 0u64;
        while let Some(frame) = source.next_frame().expect("capture reads") {
            if let FrameClass::Udp(d) = frame.class
                && lwarscope::proto::lwar::wire::is_lwar(d.payload)
            {
                lwar += 1;
                headers += u64::from(Packet::new_checked(d.payload).is_ok());
            }
        }
        assert!(lwar > 0, "{}: no lwar traffic", capture.display());
        assert!(headers > 0, "{}: no decodable header", capture.display());
    }
}

#[test]
fn every_capture_with_ground_truth_gives_exactly_its_truth() {
    let mut checked = 0;
    let mut differ = Vec::new();
    for capture in captures() {
        let Some(truth) = truth_of(&capture) else {
            continue;
        };
        let (mut summary, _) = analyse(&capture);
        // The loss estimate is an estimate: the truth states the counts only
        // (tests/lwar/loss_estimate.rs checks the estimate against the faults).
        for s in &mut summary.sessions {
            s.c2s.loss = None;
            s.s2c.loss = None;
        }
        // Bytes by message type are not serialised: no truth states them.
        summary.message_bytes = Default::default();
        if summary != truth {
            let show = |s: &Summary| serde_json::to_string_pretty(s).unwrap_or_default();
            eprintln!(
                "{}: tracker and ground truth differ\n--- tracker\n{}\n--- truth\n{}",
                capture.display(),
                show(&summary),
                show(&truth)
            );
            differ.push(capture.display().to_string());
        }
        checked += 1;
    }
    assert!(
        differ.is_empty(),
        "tracker and ground truth differ on {differ:?}"
    );
    // Recorded captures (the real server's, the live loopback one) have no ground
    // truth; every simulated one (`sim-*`) does.
    let simulated = captures()
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sim-"))
        })
        .count();
    assert!(
        simulated >= 9,
        "the simulated corpus is missing ({simulated} captures)"
    );
    assert_eq!(
        checked, simulated,
        "a simulated capture lacks its truth file"
    );
}
