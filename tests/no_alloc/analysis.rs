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

use crate::counting_alloc;

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

/// The traffic no protocol recognises is tallied by port and tried by every
/// protocol's decoder (a bounded sample of the busiest ports, at most
/// `skipped::BUDGET` datagrams in a run) without an allocation per datagram
/// once that budget is spent: Battlegrounds begun after its handshakes (which
/// its decoder reads), on ports that change from round to round so that
/// busier ports keep taking the decoders' slots, and bytes no decoder reads.
#[test]
fn skipped_traffic_is_explained_without_allocating() {
    use lwarscope::capture::{Datagram, Timestamp};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/bg-midsession.pcap");
    let mut source = Source::files(&[path]).unwrap();
    let mut payloads = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            payloads.push((d.payload.to_vec(), d.src, d.dst));
        }
    }
    let noise: Vec<Vec<u8>> = (1..64u8)
        .map(|n| (0..n).map(|i| i.wrapping_mul(37) ^ n).collect())
        .collect();
    let mut analysis = Analysis::new(());
    let mut feed = |payload: &[u8], src, dst, frame| {
        analysis.datagram(&Datagram::new(
            frame,
            Timestamp::from_millis(1_700_000_000_000 + frame),
            src,
            dst,
            payload,
        ));
    };
    // The first datagram allocates the port table, once; Vessel's decoder
    // allocates on bytes it does not read, for as long as the decoders are
    // tried (skipped::BUDGET datagrams, 8192).
    let mut before = 0;
    let mut frame = 0;
    for round in 0..40u16 {
        if round == 20 {
            before = allocations();
        }
        for (i, (p, s, d)) in payloads.iter().enumerate() {
            let (mut s, mut d) = (*s, *d);
            s.set_port(s.port().wrapping_add(round));
            d.set_port(d.port().wrapping_add(round % 3));
            frame += 1;
            feed(p, s, d, frame);
            let n = &noise[i % noise.len()];
            let port = 1000 + (i as u16 % 40) * 10 + round;
            s.set_port(port);
            d.set_port(53);
            frame += 1;
            feed(n, s, d, frame);
        }
    }
    let during = allocations() - before;
    assert_eq!(
        during,
        0,
        "{during} allocations over {} datagrams",
        frame / 2
    );
    let (outcome, ()) = analysis.finish(CaptureInfo::default());
    assert_eq!(outcome.unknown.recognised, 0);
    let top: Vec<String> = outcome
        .unknown
        .ports
        .iter()
        .map(|h| h.to_string())
        .collect();
    assert!(
        top.iter().any(|h| h.starts_with("port 7777: ")
            && h.ends_with("decode as Battlegrounds: try -d udp.port==7777,bg")),
        "{top:?}"
    );
}
