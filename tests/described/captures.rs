//! The described protocols' corpus (`captures/ksy-*.pcap` and their
//! `.truth.json`): each file regenerates byte for byte from its script
//! (`lwarscope::proto::described::sim`), and the generic analysis of the
//! shipped description reports exactly the findings of its truth. Rewrite the
//! corpus on purpose with
//! `KSY_WRITE_CORPUS=1 cargo test --test described captures::`.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Finding, Observer};
use lwarscope::proto::{self, described::sim};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Default)]
struct Collect(Vec<Finding>);
impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

fn paths(stem: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    (
        dir.join(format!("{stem}.pcap")),
        dir.join(format!("{stem}.truth.json")),
    )
}

/// Regenerates the file in a temporary folder and compares it with the
/// corpus (or rewrites the corpus when asked to).
fn regenerate(stem: &str, script: &sim::Script) {
    let (pcap, truth) = paths(stem);
    if std::env::var_os("KSY_WRITE_CORPUS").is_some() {
        script.write(&pcap, &truth).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let (p, t) = (dir.path().join("x.pcap"), dir.path().join("x.json"));
    script.write(&p, &t).unwrap();
    assert_eq!(
        std::fs::read(&p).unwrap(),
        std::fs::read(&pcap).unwrap(),
        "{stem}.pcap regenerates byte for byte"
    );
    assert_eq!(
        std::fs::read_to_string(&t).unwrap(),
        std::fs::read_to_string(&truth).unwrap(),
        "{stem}.truth.json"
    );
}

/// Per session (by client): its state, and per direction the findings by label.
type Found = BTreeMap<String, (String, BTreeMap<String, BTreeMap<String, u64>>)>;

fn analyse(pcap: &Path, protocol: &str) -> (u64, Found) {
    let stem = pcap.display();
    let mut engine = proto::engine(Default::default());
    let mut seen = Collect::default();
    let mut source = Source::files(&[pcap.to_path_buf()]).unwrap();
    let mut frames = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            frames += 1;
            assert!(
                engine.observe(&d, &mut seen).is_some(),
                "{stem}: frame {} not recognised",
                d.frame
            );
        }
    }
    engine.finish(&mut seen);
    let mut found = Found::new();
    let mut ids = BTreeMap::new();
    engine.for_each_session(|s| {
        assert_eq!(s.protocol.name, protocol, "{stem}");
        ids.insert(s.id, s.client.to_string());
        let mut dirs = BTreeMap::new();
        dirs.insert("c2s".to_owned(), BTreeMap::new());
        dirs.insert("s2c".to_owned(), BTreeMap::new());
        found.insert(s.client.to_string(), (s.state.to_owned(), dirs));
    });
    for f in &seen.0 {
        let client = &ids[&f.session];
        let dirs = &mut found.get_mut(client).unwrap().1;
        *dirs
            .get_mut(f.direction.name())
            .unwrap()
            .entry(f.label().to_string())
            .or_insert(0) += f.numbers();
    }
    (frames, found)
}

fn check(stem: &str, protocol: &str, script: sim::Script) {
    regenerate(stem, &script);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(paths(stem).1).unwrap()).unwrap();
    let (frames, found) = analyse(&paths(stem).0, protocol);
    compare(stem, &t, frames, &found);
}

/// The analysis (`frames`, `found`) against a truth.
fn compare(stem: &str, t: &Value, frames: u64, found: &Found) {
    assert_eq!(frames, t["frames"].as_u64().unwrap(), "{stem}: frames");
    let sessions = t["sessions"].as_array().unwrap();
    assert_eq!(found.len(), sessions.len(), "{stem}: sessions {found:?}");
    for s in sessions {
        let client = s["client"].as_str().unwrap();
        let (state, dirs) = found
            .get(client)
            .unwrap_or_else(|| panic!("{stem}: no session of {client}"));
        assert_eq!(
            state,
            s["state"].as_str().unwrap(),
            "{stem} {client}: state"
        );
        for dir in ["c2s", "s2c"] {
            let want: BTreeMap<String, u64> = s[dir]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(dirs[dir], want, "{stem} {client} {dir}: findings");
        }
    }
}

#[test]
fn vessel_capture_gives_its_findings_wrap_and_stale_included() {
    let script = sim::vessel();
    // The script wraps both sync numbers through 255 to 0, and a stale packet
    // arrives after newer ones: both are in the capture.
    let sync = |f: &sim::Frame| f.payload.get(5).copied();
    let c2s: Vec<u8> = script
        .frames
        .iter()
        .filter(|f| f.dst.port() == 7600)
        .filter_map(sync)
        .collect();
    assert!(c2s.windows(2).any(|w| w == [255, 0]), "c2s wraps");
    assert!(
        c2s.windows(3).any(|w| w[2] == w[0].wrapping_sub(1)),
        "a stale packet after two newer ones"
    );
    check("ksy-vessel-faults", "vessel_fixed", script);
}

#[test]
fn timewarp_capture_gives_its_findings() {
    check("ksy-timewarp-faults", "timewarp", sim::timewarp());
}

#[test]
fn a_one_byte_sync_number_reports_every_loss_however_many_cycles_pass() {
    // 28 s of Vessel at 30 Hz each way, about 2.5 % lost before the tap:
    // the 8-bit sync numbers go round more than three times. Each number
    // the script dropped is reported as soon as it is known: a
    // `not-captured` note, unconfirmed (the fixed-layout Vessel has no acks
    // to tell a loss from a tap miss).
    let script = sim::vessel_lossy(28, 25, 7);
    let lost = |dir: &str| {
        script.truth["sessions"][0][dir]["not-captured"]
            .as_u64()
            .unwrap()
    };
    assert_eq!((lost("c2s"), lost("s2c")), (22, 21), "the script's drops");
    let dir = tempfile::tempdir().unwrap();
    let (pcap, truth) = (dir.path().join("x.pcap"), dir.path().join("x.json"));
    script.write(&pcap, &truth).unwrap();
    let (frames, found) = analyse(&pcap, "vessel_fixed");
    compare("vessel-lossy", &script.truth, frames, &found);
}
