//! Starstrike's analysis allocates nothing per packet: after a warm-up, the
//! second half of a lossy, duplicated simulated capture (retransmissions, lost
//! numbers, findings raised) goes through `Tracker::observe` without one heap
//! allocation.

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer};
use lwarscope::proto::starstrike::Tracker;
use lwarscope::proto::starstrike::sim::{SimConfig, simulate};

use crate::counting_alloc;

use counting_alloc::allocations;

/// Counts findings without allocating.
#[derive(Default)]
struct Tally(u64);

impl Observer for Tally {
    fn finding(&mut self, _: &Finding) {
        self.0 += 1;
    }
}

#[test]
fn the_hot_path_allocates_nothing() {
    let sim = simulate(&SimConfig {
        seed: 21,
        clients: 4,
        loss: 0.1,
        duplicate: 0.05,
        duration_ms: 8_000,
        ..SimConfig::default()
    })
    .unwrap();
    let mut tracker = Tracker::default();
    let mut tally = Tally::default();
    let half = sim.frames.len() / 2;
    let mut before = 0;
    for (i, f) in sim.frames.iter().enumerate() {
        if i == half {
            before = allocations();
        }
        let d = Datagram::new(
            i as u64 + 1,
            Timestamp(f.ts_us * 1_000),
            f.src,
            f.dst,
            &f.payload,
        );
        tracker.observe(&d, &mut tally);
    }
    let during = allocations() - before;
    assert!(tally.0 > 20, "{} findings", tally.0);
    assert_eq!(tracker.session_count(), 4);
    assert_eq!(
        during,
        0,
        "{during} allocations over {} packets",
        sim.frames.len() - half
    );
}
