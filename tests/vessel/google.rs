//! A Vessel capture whose packets were encoded by Google's own protobuf
//! library (Python `protobuf`, not this project): `tests/fixtures/vessel-google/`,
//! written by `gen.py` there (committed with its truth, so this test needs no
//! Python). Every datagram decodes field for field as injected (the fields on
//! the wire, in order, with their values), and the analysis finds per session
//! exactly what was injected: packets, messages, the malformed one, the
//! duplicate, the reorder, the skipped numbers (lost before the tap, missed by
//! it, or unreadable), the violations, the notes and the final state.

use lwarscope::proto::field::FieldDef;
use lwarscope::proto::field::Value;
use lwarscope::proto::vessel::wire::{self, Visit, Which};
use serde_json::Value as Json;
use std::collections::BTreeMap;

use crate::vessel_common;

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
        let j = vessel_common::google_json(def.name, v);
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
    vessel_common::check_google_fixture(|d| {
        let which = if d.dst.port() == wire::PORT {
            Which::ToEnvironment
        } else {
            Which::ToVessel
        };
        let mut got = OnWire::default();
        wire::walk(d.payload, which, &mut got).map_err(|e| e.to_string())?;
        Ok(got.0)
    });
}

#[test]
fn the_analysis_finds_what_was_injected() {
    let truth = vessel_common::google_truth();
    let got = vessel_common::analyse(&vessel_common::google_pcap());
    let want: BTreeMap<String, BTreeMap<String, Json>> =
        serde_json::from_value(truth["sessions"].clone()).unwrap();
    assert_eq!(got, want);
}
