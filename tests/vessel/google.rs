//! A Vessel capture whose packets were encoded by Google's own protobuf
//! library (Python `protobuf`, not this project): `tests/fixtures/vessel-google/`,
//! written by `gen.py` there (committed with its truth, so this test needs no
//! Python). Every datagram decodes field for field as injected (the fields on
//! the wire, in order, with their values), and the analysis finds per session
//! exactly what was injected: packets, messages, the malformed one, the
//! duplicate, the reorder, the skipped numbers (lost before the tap, missed by
//! it, or unreadable), the violations, the notes and the final state.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::proto::field::FieldDef;
use lwarscope::proto::field::Value;
use lwarscope::proto::vessel::wire::{self, Visit, Which};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

use crate::vessel_common;

const DIR: &str = "tests/fixtures/vessel-google";

fn truth() -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join("vessel-google.truth.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn pcap() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join("vessel-google.pcap")
}

/// The fields on the wire, as the truth writes them: `[path, value]`, a
/// message `[path, null]`.
#[derive(Default)]
struct OnWire(Vec<(String, Json)>);

impl Visit for OnWire {
    fn field(
        &mut self,
        def: &'static FieldDef,
        _: Option<u32>,
        span: (usize, usize),
        v: Value<'_>,
    ) {
        if span.1 == span.0 {
            return; // absent: its default
        }
        let j = match v {
            Value::Text(t) => Json::from(String::from_utf8(t.to_vec()).unwrap()),
            Value::Bool(b) => Json::from(b),
            Value::Unsigned(n) => Json::from(n),
            Value::Enum { raw, .. } => Json::from(raw),
            Value::Float(x) => Json::from(x),
            other => panic!("{}: {other:?}", def.name),
        };
        self.0.push((def.name.to_owned(), j));
    }
    fn enter(&mut self, def: &'static FieldDef, _: Option<u32>, _: (usize, usize)) {
        // The packet's own node is not a field of the truth.
        if is_field_node(def) {
            self.0.push((def.name.to_owned(), Json::Null));
        }
    }
    fn leave(&mut self) {}
}

/// A node that is a field (shipInput, shipSensors...), not a message type.
fn is_field_node(def: &FieldDef) -> bool {
    !matches!(
        def.name,
        "vessel.vesselToEnvironment" | "vessel.environmentToVessel" | "vessel.versionOnly"
    )
}

#[test]
fn every_packet_google_encoded_decodes_field_for_field() {
    let truth = truth();
    let frames = truth["frames"].as_array().unwrap();
    let mut source = Source::files(&[pcap()]).unwrap();
    let mut n = 0;
    let mut malformed = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        let FrameClass::Udp(d) = frame.class else {
            panic!("frame {}: not UDP", n + 1);
        };
        let want = &frames[n];
        n += 1;
        assert_eq!(want["frame"], n as u64);
        let which = if d.dst.port() == wire::PORT {
            Which::ToEnvironment
        } else {
            Which::ToVessel
        };
        let mut got = OnWire::default();
        let r = wire::walk(d.payload, which, &mut got);
        if want["malformed"] == true {
            assert!(r.is_err(), "frame {n}: decodes, injected malformed");
            malformed += 1;
            continue;
        }
        r.unwrap_or_else(|e| panic!("frame {n}: {e}"));
        let want: Vec<(String, Json)> = want["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_owned(), p[1].clone()))
            .collect();
        // Numbers compared as numbers (a float32 Python widened to a double
        // is the same double).
        assert_eq!(
            got.0.len(),
            want.len(),
            "frame {n}: {:?} vs {want:?}",
            got.0
        );
        for ((gp, gv), (wp, wv)) in got.0.iter().zip(&want) {
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

#[test]
fn the_analysis_finds_what_was_injected() {
    let truth = truth();
    let got = vessel_common::analyse(&pcap());
    let want: BTreeMap<String, BTreeMap<String, Json>> =
        serde_json::from_value(truth["sessions"].clone()).unwrap();
    assert_eq!(got, want);
}
