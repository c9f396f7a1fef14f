//! A described protocol allocates nothing per packet: after a warm-up, the
//! second half of the Vessel capture script (lost, stale, duplicated,
//! malformed packets and `valid` violations, findings raised) goes through the
//! generic analysis without one heap allocation, and the field walk of every
//! packet allocates nothing.

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer, RecognisedBy};
use lwarscope::proto::described::{self, sim};
use lwarscope::proto::field::{Field, FieldSink};

use crate::counting_alloc;

use counting_alloc::allocations;

#[derive(Default)]
struct Tally(u64);

impl Observer for Tally {
    fn finding(&mut self, _: &Finding) {
        self.0 += 1;
    }
}

struct Count(usize);
impl FieldSink for Count {
    fn field(&mut self, _: Field<'_>) {
        self.0 += 1;
    }
}

#[test]
fn the_hot_path_allocates_nothing() {
    let vessel = described::loaded()
        .iter()
        .find(|d| d.ksy.id == "vessel_fixed")
        .copied()
        .unwrap();
    let script = sim::vessel();
    let mut tracker = described::tracker(vessel, Default::default());
    let dissector = vessel.info().dissector;
    let mut tally = Tally::default();
    let mut fields = Count(0);
    let mut next_id = 0;
    let half = script.frames.len() / 2;
    let mut before = 0;
    for (i, f) in script.frames.iter().enumerate() {
        if i == half {
            before = allocations();
        }
        let d = Datagram::new(
            i as u64 + 1,
            Timestamp::from_millis(f.ms),
            f.src,
            f.dst,
            &f.payload,
        );
        tracker.observe(&d, &mut tally, &mut next_id, RecognisedBy::Probe);
        let _ = dissector.fields(&f.payload, &mut fields);
    }
    let during = allocations() - before;
    let mut summary = tally.0;
    tracker.finish(&mut tally);
    summary += tally.0;
    assert!(summary >= 4, "{summary} findings");
    assert!(fields.0 > 1000, "{} fields", fields.0);
    assert_eq!(
        during,
        0,
        "{during} allocations over {} packets",
        script.frames.len() - half
    );
}
