//! What the Vessel analysis finds in a capture, per session, in the terms of
//! the truth files (`tests/fixtures/vessel-google/*.truth.json`,
//! `captures/vessel-*.truth.json`), and the Google-encoded fixture checked
//! field for field by any decoder of Vessel (native or described).
#![allow(dead_code)]

use lwarscope::capture::{Datagram, FrameClass, Source};
use lwarscope::engine::{Direction, Finding, Observer};
use lwarscope::proto;
use lwarscope::proto::field::Value;
use lwarscope::proto::vessel::wire;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// How many numbers a `sync-skipped` detail names.
fn numbers(detail: &str) -> u64 {
    match detail.split_once('(') {
        Some((_, rest)) if detail.starts_with("syncNumbers") => {
            rest.split(')').next().unwrap().parse().unwrap()
        }
        _ => 1,
    }
}

/// Per session (the vessel's address): state, packets, messages, and the
/// count of each finding, in the truth's keys.
pub fn analyse(pcap: &Path) -> BTreeMap<String, BTreeMap<String, Json>> {
    let mut source = Source::files(&[pcap]).unwrap();
    let mut engine = proto::engine(Default::default());
    let mut seen = Collect::default();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine
                .observe(&d, &mut seen)
                .expect("every datagram is Vessel's");
        }
    }
    engine.finish(&mut seen);
    let mut got: BTreeMap<String, BTreeMap<String, Json>> = BTreeMap::new();
    engine.for_each_session(|s| {
        assert_eq!(s.protocol.name, "vessel");
        let mut m = BTreeMap::new();
        m.insert("state".into(), Json::from(s.state));
        m.insert("c2s_packets".into(), Json::from(s.c2s.packets));
        m.insert("s2c_packets".into(), Json::from(s.s2c.packets));
        for (i, name) in wire::MESSAGE_TYPES.iter().enumerate() {
            let count = s.c2s.messages[i] + s.s2c.messages[i];
            if count > 0 {
                m.insert((*name).into(), Json::from(count));
            }
        }
        m.insert("violations".into(), Json::from(0));
        got.insert(s.client.to_string(), m);
    });
    for f in &seen.0 {
        let client = engine.session(f.session).unwrap().client.to_string();
        let m = got.get_mut(&client).unwrap();
        let mut add = |k: &str, n: u64| {
            let e = m.entry(k.into()).or_insert(Json::from(0));
            *e = Json::from(e.as_u64().unwrap() + n);
        };
        let key = match f.kind.name() {
            "malformed" => "malformed",
            "duplicate-packet" => "duplicates",
            "reordered" => "reordered",
            "vessel-id-issued" => {
                if f.detail.to_string().contains("rejoin") {
                    add("rejoin", 1);
                }
                "issued"
            }
            "version-refused" => "refused",
            "join-denied" => "denied",
            "sync-skipped" => {
                let n = numbers(&f.detail.to_string());
                let k = match f.direction {
                    Direction::ClientToServer => "skipped_c2s",
                    Direction::ServerToClient => "skipped_s2c",
                };
                add(k, n);
                continue;
            }
            "violation" => {
                add("violations", 1);
                f.rule.unwrap().name()
            }
            other => panic!("unexpected {other} at frame {}", f.frame),
        };
        add(&key.replace('-', "_"), 1);
    }
    got
}

/// The Google-encoded fixture's folder.
pub const GOOGLE: &str = "tests/fixtures/vessel-google";

/// The Google-encoded fixture's truth.
pub fn google_truth() -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(GOOGLE)
        .join("vessel-google.truth.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The Google-encoded fixture's capture.
pub fn google_pcap() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(GOOGLE)
        .join("vessel-google.pcap")
}

/// A field's value as the truth writes it (absent fields are left out by
/// the caller).
pub fn google_json(name: &str, v: Value<'_>) -> Json {
    match v {
        Value::Text(t) => Json::from(String::from_utf8(t.to_vec()).unwrap()),
        Value::Bool(b) => Json::from(b),
        Value::Unsigned(n) => Json::from(n),
        Value::Enum { raw, .. } => Json::from(raw),
        Value::Float(x) => Json::from(x),
        other => panic!("{name}: {other:?}"),
    }
}

/// Every datagram of the Google-encoded fixture, read by `walk` (its
/// decoder: the fields on the wire, in order, as `[path, value]`, a message
/// `[path, null]`; or its error), gives the truth's fields; the one frame
/// made malformed does not decode.
pub fn check_google_fixture(
    mut walk: impl FnMut(&Datagram<'_>) -> Result<Vec<(String, Json)>, String>,
) {
    let truth = google_truth();
    let frames = truth["frames"].as_array().unwrap();
    let mut source = Source::files(&[google_pcap()]).unwrap();
    let (mut n, mut malformed) = (0, 0);
    while let Some(frame) = source.next_frame().unwrap() {
        let FrameClass::Udp(d) = frame.class else {
            panic!("frame {}: not UDP", n + 1);
        };
        let want = &frames[n];
        n += 1;
        assert_eq!(want["frame"], n as u64);
        let r = walk(&d);
        if want["malformed"] == true {
            assert!(r.is_err(), "frame {n}: decodes, injected malformed");
            malformed += 1;
            continue;
        }
        let got = r.unwrap_or_else(|e| panic!("frame {n}: {e}"));
        let want: Vec<(String, Json)> = want["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_owned(), p[1].clone()))
            .collect();
        // Numbers compared as numbers (a float32 Python widened to a double
        // is the same double).
        assert_eq!(got.len(), want.len(), "frame {n}: {got:?} vs {want:?}");
        for ((gp, gv), (wp, wv)) in got.iter().zip(&want) {
            assert_eq!(gp, wp, "frame {n}");
            match (gv.as_f64(), wv.as_f64()) {
                (Some(a), Some(b)) => assert_eq!(a, b, "frame {n}: {gp}"),
                _ => assert_eq!(gv, wv, "frame {n}: {gp}"),
            }
        }
    }
    assert_eq!(n, frames.len());
    assert_eq!(malformed, 1);
}
