//! The tracker per packet: a simulated game of 8 clients (100 000 packets from
//! `lwarscope sim`, clean and then with 2 % loss, duplicates and reordering),
//! read once into memory, then fed to a fresh [`Tracker`] each iteration; and
//! the same stream through the report's [`Analysis`] (tracker plus the report's
//! own counts), which is what `lwarscope -r` runs per packet. Measured in
//! packets/s.
//!
//! `cargo bench --bench tracker -- --warm-up-time 1 --measurement-time 3`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lwarscope::capture::{FrameClass, OwnedDatagram, Source};
use lwarscope::proto::lwar::Tracker;
use lwarscope::proto::lwar::sim::{Faults, VirtualConfig, run_virtual};
use lwarscope::report::{Analysis, CaptureInfo};
use std::hint::black_box;

const PACKETS: u64 = 100_000;

/// The lwar datagrams of a simulated capture.
fn simulate(faulty: bool) -> Vec<OwnedDatagram> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("sim.pcap");
    let mut config = VirtualConfig::clean(1, 8, 0);
    config.duration_ms = None;
    config.packets = Some(PACKETS);
    if faulty {
        let faults = Faults {
            loss: 0.02,
            duplicate: 0.02,
            reorder: 0.02,
            ..Faults::default()
        };
        config.c2s = faults;
        config.s2c = faults;
    }
    run_virtual(&config, &path, None).expect("the simulation runs");
    let mut source = Source::files(&[&path]).expect("the capture opens");
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().expect("the capture reads") {
        if let FrameClass::Udp(d) = frame.class {
            out.push(d.to_owned_datagram());
        }
    }
    assert_eq!(out.len() as u64, PACKETS);
    out
}

fn tracker(c: &mut Criterion) {
    let mut group = c.benchmark_group("tracker");
    group.sample_size(20);
    for (name, faulty) in [("clean", false), ("faulty", true)] {
        let stream = simulate(faulty);
        group.throughput(Throughput::Elements(stream.len() as u64));
        group.bench_with_input(BenchmarkId::new("observe", name), &stream, |b, s| {
            b.iter(|| {
                let mut tracker = Tracker::default();
                for d in s {
                    tracker.observe(&d.as_datagram(), &mut ());
                }
                black_box(tracker.finish(&mut ()))
            })
        });
        group.bench_with_input(
            BenchmarkId::new("report-analysis", name),
            &stream,
            |b, s| {
                b.iter(|| {
                    let mut analysis = Analysis::new(());
                    for d in s {
                        analysis.datagram(&d.as_datagram());
                    }
                    black_box(analysis.finish(CaptureInfo::default()).0)
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, tracker);
criterion_main!(benches);
