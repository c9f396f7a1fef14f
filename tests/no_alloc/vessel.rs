//! Vessel's steady state allocates nothing per packet: after a warm-up (the
//! decoder's strings and list of visible objects grown), a long stream of
//! vessel and environment packets (sensors with up to 8 objects, skipped sync
//! numbers, network duplicates, out-of-date packets, so findings are raised)
//! goes through `Tracker::observe` and the dissector (typed fields, the field
//! tree of `-V`, the one-line text) without one heap allocation.
//!
//! A malformed datagram is the exception: prost's `DecodeError` is boxed, so
//! refusing one costs a few allocations, freed at once (bounded: counted
//! below).

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer, TrackerConfig};
use lwarscope::proto::dissect::TreeRef;
use lwarscope::proto::field::{Field, FieldSink};
use lwarscope::proto::vessel::wire::{
    EnvironmentToVessel, HealthSensor, Position, ShipInput, ShipSensors, VesselToEnvironment,
    VisibleObject, VisualSensors,
};
use lwarscope::proto::vessel::{INFO, Tracker};
use prost::Message;
use std::net::SocketAddr;

use crate::counting_alloc;

use counting_alloc::allocations;

#[derive(Default)]
struct Tally(u64);

impl Observer for Tally {
    fn finding(&mut self, _: &Finding) {
        self.0 += 1;
    }
}

struct Count(u64);
impl FieldSink for Count {
    fn field(&mut self, _: Field<'_>) {
        self.0 += 1;
    }
}

/// The packets of step `i`, as (from the vessel?, bytes).
fn step(i: u32, malformed: bool) -> Vec<(bool, Vec<u8>)> {
    let sync = (i + i / 7) % 256; // every 7th number skipped
    let v = VesselToEnvironment {
        protocol_version: "0.0.2".into(),
        vessel_id: "vessel-0001".into(),
        sync_number: sync,
        ship_input: Some(ShipInput {
            throttle_left_engine: (i % 10) as f32 / 9.0,
            thruster_rear_left: i.is_multiple_of(2),
            ..Default::default()
        }),
    }
    .encode_to_vec();
    let objects = (0..i % 9)
        .map(|k| VisibleObject {
            r#type: (k % 2) as i32,
            position: Some(Position {
                x: f64::from(k),
                y: -1.5,
            }),
            orientation: 0.5,
            velocity: None,
        })
        .collect();
    let e = EnvironmentToVessel {
        protocol_version: "0.0.2".into(),
        join_status: true,
        vessel_id: String::new(),
        sync_number: i % 256,
        ship_input: Some(ShipInput::default()),
        ship_sensors: Some(ShipSensors {
            visual: Some(VisualSensors {
                visible_objects: objects,
            }),
            health: Some(HealthSensor {
                health: 100 - i % 50,
            }),
        }),
    }
    .encode_to_vec();
    let mut out = vec![(true, v.clone()), (false, e.clone())];
    if i.is_multiple_of(5) {
        out.push((true, v)); // a network duplicate
    }
    if i.is_multiple_of(11) && i > 0 {
        // The environment's previous number again: out of date.
        let mut old = EnvironmentToVessel::decode(e.as_slice()).unwrap();
        old.sync_number = (i - 1) % 256;
        old.ship_input = None;
        out.push((false, old.encode_to_vec()));
    }
    if malformed && i.is_multiple_of(13) {
        out.push((false, e[..e.len() - 3].to_vec())); // malformed
    }
    out
}

#[test]
fn the_steady_state_does_not_allocate() {
    let (during, findings, fields) = run(false);
    assert!(findings > 1000, "{findings} findings");
    assert!(fields > 100_000, "{fields} fields");
    assert_eq!(during, 0, "{during} allocations over the second half");
}

/// prost's boxed error: the analysis refuses a malformed datagram with at
/// most 2 allocations, the dissector's three walks with at most 1 each.
#[test]
fn a_malformed_datagram_costs_a_few_allocations() {
    let (during, _, _) = run(true);
    // 2000 steps in the second half, every 13th with one malformed packet.
    let malformed = (2000..4000u32).filter(|i| i.is_multiple_of(13)).count() as u64;
    assert!(
        during <= 5 * malformed,
        "{during} for {malformed} malformed"
    );
    assert!(during > 0);
}

/// Feeds 4000 steps; the allocations over the second half, the findings,
/// the fields walked.
fn run(malformed: bool) -> (u64, u64, u64) {
    let vessel: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let env: SocketAddr = "10.0.0.2:39461".parse().unwrap();
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut tally = Tally::default();
    let steps: Vec<_> = (0..4000u32).map(|i| step(i, malformed)).collect();
    let dissector = INFO.dissector;
    let mut line = Vec::with_capacity(4096);
    let mut fields = Count(0);
    let mut frame = 0u64;
    let mut before = 0;
    for (i, packets) in steps.iter().enumerate() {
        if i == steps.len() / 2 {
            before = allocations();
        }
        for (k, (from_vessel, p)) in packets.iter().enumerate() {
            frame += 1;
            let (src, dst) = if *from_vessel {
                (vessel, env)
            } else {
                (env, vessel)
            };
            let d = Datagram::new(
                frame,
                Timestamp((10 + i as u64 * 16 + k as u64) * 1_000_000),
                src,
                dst,
                p,
            );
            tracker.observe(&d, &mut tally);
            let _ = dissector.fields(p, &mut fields);
            dissector.tree_ref(p, &mut |e| {
                if let TreeRef::Field { value, .. } = e {
                    line.extend_from_slice(value.as_bytes());
                }
            });
            let _ = dissector.messages(p, &mut |m| m.text.write_bytes(&mut line));
            line.clear();
        }
    }
    (allocations() - before, tally.0, fields.0)
}
