//! The capture front end: dissecting frames (link, IP and UDP headers) down to the
//! lwar datagram, with [`classify_frame`], for the framings lwarscope meets most:
//! Ethernet with IPv4 or IPv6, an 802.1Q tag, and Linux cooked v2 (`-i any`).
//! The payloads are a client Input packet and the largest server packet of the
//! real server's capture (`tests/fixtures/real-server-clean.tsv`). Then the
//! whole [`Source`] over a pcap file in the page cache: libpcap's read, the copy
//! and the dissection. Measured in frames/s and bytes/s.
//!
//! `cargo bench --bench capture -- --warm-up-time 1 --measurement-time 3`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lwarscope::capture::synth::{ARPHRD_ETHER, Link, PcapWriter, udp_frame};
use lwarscope::capture::{FrameClass, Source, Timestamp, classify_frame};
use std::hint::black_box;
use std::net::SocketAddr;

#[path = "../tests/common/vectors.rs"]
mod vectors;

fn addrs(v6: bool) -> (SocketAddr, SocketAddr) {
    if v6 {
        (
            "[2001:db8::1]:50000".parse().unwrap(),
            "[2001:db8::2]:32422".parse().unwrap(),
        )
    } else {
        (
            "192.168.1.10:50000".parse().unwrap(),
            "192.168.1.2:32422".parse().unwrap(),
        )
    }
}

fn frames(c: &mut Criterion) {
    let all = vectors::real_server_payloads();
    let small = all.iter().min_by_key(|p| p.len()).unwrap().clone();
    let large = all.iter().max_by_key(|p| p.len()).unwrap().clone();
    let cases = [
        ("ethernet-ipv4", Link::Ethernet, false),
        ("ethernet-ipv6", Link::Ethernet, true),
        ("vlan-ipv4", Link::Vlan(7), false),
        ("sll2-ipv4", Link::LinuxSll2(ARPHRD_ETHER), false),
    ];
    let mut group = c.benchmark_group("classify_frame");
    for (name, link, v6) in cases {
        for (size, payload) in [("small", &small), ("large", &large)] {
            let (src, dst) = addrs(v6);
            let frame = udp_frame(link, src, dst, payload);
            let link_type = link.link_type();
            assert!(matches!(
                classify_frame(link_type, &frame, false, 1, Timestamp(0)),
                FrameClass::Udp(_)
            ));
            group.throughput(Throughput::Elements(1));
            group.bench_with_input(
                BenchmarkId::new(format!("{name}/frames"), format!("{size}-{}B", frame.len())),
                &frame,
                |b, f| b.iter(|| classify_frame(link_type, black_box(f), false, 1, Timestamp(0))),
            );
        }
    }
    group.finish();
}

fn source(c: &mut Criterion) {
    let all = vectors::real_server_payloads();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("capture.pcap");
    let mut writer = PcapWriter::create(&path, Link::Ethernet.link_type()).unwrap();
    let (client, server) = addrs(false);
    let (mut count, mut bytes) = (0u64, 0u64);
    // The real capture over and over: 10 times its 525 frames.
    for round in 0..10u64 {
        for (i, p) in all.iter().enumerate() {
            let (src, dst) = if i % 2 == 0 {
                (client, server)
            } else {
                (server, client)
            };
            let frame = udp_frame(Link::Ethernet, src, dst, p);
            let ts = Timestamp::from_millis(1_700_000_000_000 + (round * 525 + i as u64) * 10);
            writer.write(ts, &frame);
            count += 1;
            bytes += frame.len() as u64;
        }
    }
    writer.finish().unwrap();

    let mut group = c.benchmark_group("source");
    for (unit, throughput) in [
        ("frames", Throughput::Elements(count)),
        ("bytes", Throughput::Bytes(bytes)),
    ] {
        group.throughput(throughput);
        group.bench_function(format!("pcap-file/{unit}"), |b| {
            b.iter(|| {
                let mut source = Source::files(&[&path]).unwrap();
                let mut lwar = 0u64;
                while let Some(frame) = source.next_frame().unwrap() {
                    lwar += u64::from(matches!(frame.class, FrameClass::Udp(_)));
                }
                assert_eq!(lwar, count);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, frames, source);
criterion_main!(benches);
