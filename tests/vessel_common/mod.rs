//! What the Vessel analysis finds in a capture, per session, in the terms of
//! the truth files (`tests/fixtures/vessel-google/*.truth.json`,
//! `captures/vessel-*.truth.json`).

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Direction, Finding, Observer};
use lwarscope::proto;
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
