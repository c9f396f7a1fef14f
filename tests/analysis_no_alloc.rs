//! The report's hot path allocates nothing per packet: a simulated game of 8
//! clients (with loss, duplicates and reordering, so findings are raised) is
//! read from its pcap file by the capture `Source` and analysed as
//! `lwarscope -r` (the table report) and `lwarscope check` analyse it, through
//! `report::Analysis`. After a warm-up of the first half of the capture (every
//! session started, every buffer grown), the second half goes through without
//! one heap allocation.
//!
//! The counting allocator counts per thread, so the test harness's other threads
//! do not disturb the count.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::proto::lwar::sim::{Faults, VirtualConfig, run_virtual};
use lwarscope::report::{Analysis, CaptureInfo};

mod counting_alloc;

use counting_alloc::allocations;

const PACKETS: u64 = 60_000;

#[test]
fn the_report_path_does_not_allocate_per_packet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.pcap");
    let mut config = VirtualConfig::clean(3, 8, 0);
    config.duration_ms = None;
    config.packets = Some(PACKETS);
    config.stay = true;
    let faults = Faults {
        loss: 0.02,
        duplicate: 0.01,
        reorder: 0.01,
        ..Faults::default()
    };
    config.c2s = faults;
    config.s2c = faults;
    run_virtual(&config, &path, None).unwrap();

    let mut source = Source::files(&[&path]).unwrap();
    let mut analysis = Analysis::new(());
    let mut packets = 0u64;
    let mut before = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            analysis.datagram(&d);
            packets += 1;
            if packets == PACKETS / 2 {
                before = allocations();
            }
        }
    }
    let during = allocations() - before;
    assert_eq!(packets, PACKETS);
    let (outcome, ()) = analysis.finish(CaptureInfo::default());
    // The stream is a real game: 8 sessions, findings of the faults.
    assert_eq!(outcome.sessions.len(), 8);
    let findings: u64 = outcome.summary.findings.values().sum();
    assert!(findings > 100, "{findings} findings");
    assert_eq!(
        during,
        0,
        "{during} allocations over the last {} packets",
        PACKETS / 2
    );
}
