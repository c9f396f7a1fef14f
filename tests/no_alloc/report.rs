//! The per-packet paths of the outputs allocate nothing: evaluating a display
//! filter, printing a packet line, and writing a JSONL packet object (into a
//! buffer sized beforehand), over every packet of the real server's capture, with
//! findings attached to some of them.
//!
//! The counting allocator counts per thread, so the test harness's other threads
//! do not disturb the count.

use crate::common;

use common::{real_server_vectors, vector_datagrams};
use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{
    Detail, Direction, Finding, FindingKind, Observer, PacketEvent, ProtocolInfo,
};
use lwarscope::report::Filter;
use lwarscope::report::json::JsonlWriter;
use lwarscope::report::packets::{PacketOptions, PacketPrinter};
use std::net::SocketAddr;

use crate::counting_alloc;

use counting_alloc::allocations;

const FILTER: &str = "(Join || Leave) && seqno >= 2 || peer == [::1]:45754 && Chat && !malformed \
                      || finding == violation/after-disconnect && player == 0:1 \
                      || type == Input && ts > 100 && ts < 200 && port != 1";

#[test]
fn filters_packet_lines_and_jsonl_allocate_nothing_per_packet() {
    let vectors = real_server_vectors();
    let datagrams = vector_datagrams(&vectors, std::net::Ipv6Addr::LOCALHOST.into());
    let finding = |kind, rule| Finding {
        kind,
        rule,
        frame: 1,
        ts: Timestamp(0),
        session: 0,
        direction: Direction::ServerToClient,
        seqno: Some(3),
        detail: Detail::Gap {
            highest: 1,
            missing: 1,
        },
    };
    let findings = [
        finding(FindingKind::RESEND, None),
        finding(FindingKind::RESEND, None),
        finding(
            FindingKind::VIOLATION,
            Some(lwarscope::proto::lwar::findings::rules::AFTER_DISCONNECT),
        ),
    ];
    let filter = Filter::parse(FILTER).unwrap();
    let mut printer = PacketPrinter::new(
        Vec::with_capacity(8 << 20),
        PacketOptions::default(),
        Some(filter.clone()),
    );
    let mut jsonl = JsonlWriter::new(Vec::with_capacity(32 << 20), None);

    let mut selected = 0;
    let mut pass = |printer: &mut PacketPrinter<Vec<u8>>, jsonl: &mut JsonlWriter<Vec<u8>>| {
        for (i, d) in datagrams.iter().enumerate() {
            let attached = if i % 7 == 0 { &findings[..] } else { &[] };
            let event = PacketEvent {
                datagram: d,
                protocol: &lwarscope::proto::lwar::INFO,
                session: 0,
                direction: Direction::ClientToServer,
                findings: attached,
                acks: Default::default(),
                ack_samples: [&[], &[]],
                resends: 0,
                dissector: None,
            };
            if filter.matches(&event) {
                selected += 1;
            }
            for f in attached {
                printer.finding(f);
                jsonl.finding(f);
            }
            printer.packet(&event);
            jsonl.packet(&event);
        }
    };
    // Warm-up: the buffers of the observers find their size.
    pass(&mut printer, &mut jsonl);
    let before = allocations();
    for _ in 0..4 {
        pass(&mut printer, &mut jsonl);
    }
    let after = allocations();
    assert_eq!(after - before, 0, "allocations over 4 x 525 packets");
    assert!(selected > 0 && selected < 5 * datagrams.len(), "{selected}");
    assert!(printer.failed().is_none() && jsonl.failed().is_none());
}

/// The event of a datagram with no finding.
fn plain_event<'a>(d: &'a Datagram<'a>, protocol: &'static ProtocolInfo) -> PacketEvent<'a> {
    PacketEvent {
        datagram: d,
        protocol,
        session: 0,
        direction: Direction::ClientToServer,
        findings: &[],
        acks: Default::default(),
        ack_samples: [&[], &[]],
        resends: 0,
        dissector: None,
    }
}

/// `-V` and `-x`: the field tree of every packet (lwar's dissector writes it
/// through reused buffers) and the hex dump, into a line buffer.
#[test]
fn verbose_and_hex_packet_lines_allocate_nothing_per_packet() {
    let vectors = real_server_vectors();
    let datagrams = vector_datagrams(&vectors, std::net::Ipv4Addr::LOCALHOST.into());
    let options = PacketOptions {
        verbose: true,
        hex: true,
        ..PacketOptions::default()
    };
    let mut printer = PacketPrinter::new(Vec::with_capacity(64 << 20), options, None);
    let pass = |printer: &mut PacketPrinter<Vec<u8>>| {
        for d in &datagrams {
            printer.packet(&plain_event(d, &lwarscope::proto::lwar::INFO));
        }
    };
    pass(&mut printer);
    let before = allocations();
    for _ in 0..4 {
        pass(&mut printer);
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "allocations over 4 x 525 packets of -V -x"
    );
    assert!(printer.failed().is_none());
}

/// The UDP datagrams of a capture of `captures/`: (frame, time, source,
/// destination, payload).
fn capture_datagrams(name: &str) -> Vec<(u64, Timestamp, SocketAddr, SocketAddr, Vec<u8>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name);
    let mut source = lwarscope::capture::Source::files(&[path]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let lwarscope::capture::FrameClass::Udp(d) = frame.class {
            out.push((d.frame, d.ts, d.src, d.dst, d.payload.to_vec()));
        }
    }
    out
}

/// Packet lines, JSON Lines, and `-V -x` of every datagram of `captures`
/// (decoded as `protocol`, undecodable ones included), after a warm-up
/// pass: no allocation over four more.
fn outputs_allocate_nothing(protocol: &'static ProtocolInfo, captures: &[&str]) {
    let owned: Vec<_> = captures.iter().flat_map(|c| capture_datagrams(c)).collect();
    let datagrams: Vec<Datagram<'_>> = owned
        .iter()
        .map(|(frame, ts, src, dst, payload)| Datagram::new(*frame, *ts, *src, *dst, payload))
        .collect();
    assert!(datagrams.len() > 100, "{} datagrams", datagrams.len());
    let mut lines =
        PacketPrinter::new(Vec::with_capacity(16 << 20), PacketOptions::default(), None);
    let verbose = PacketOptions {
        verbose: true,
        hex: true,
        ..PacketOptions::default()
    };
    let mut tree = PacketPrinter::new(Vec::with_capacity(256 << 20), verbose, None);
    let mut jsonl = JsonlWriter::new(Vec::with_capacity(64 << 20), None);
    // Allocations of each output: packet lines, JSON Lines, -V -x.
    let mut during = [0u64; 3];
    let mut pass = |count: bool| {
        for d in &datagrams {
            let event = plain_event(d, protocol);
            let mut n = allocations();
            let mut counted = |i: usize| {
                let now = allocations();
                if count {
                    during[i] += now - n;
                }
                n = now;
            };
            lines.packet(&event);
            counted(0);
            jsonl.packet(&event);
            counted(1);
            tree.packet(&event);
            counted(2);
        }
    };
    // Warm-up: the buffers find their size.
    pass(false);
    for _ in 0..4 {
        pass(true);
    }
    assert_eq!(
        during,
        [0; 3],
        "allocations of --packets, --format jsonl, -V -x over 4 x {} {} packets",
        datagrams.len(),
        protocol.name
    );
    assert!(lines.failed().is_none() && jsonl.failed().is_none() && tree.failed().is_none());
}

#[test]
fn starstrike_outputs_allocate_nothing_per_packet() {
    outputs_allocate_nothing(
        &lwarscope::proto::starstrike::INFO,
        &["strs-clean.pcap", "strs-corrupt.pcap", "strs-reject.pcap"],
    );
}

#[test]
fn battlegrounds_outputs_allocate_nothing_per_packet() {
    outputs_allocate_nothing(
        &lwarscope::proto::battlegrounds::INFO,
        &["bg-clean.pcap", "bg-bigmsg.pcap", "bg-corrupt.pcap"],
    );
}

#[test]
fn vessel_outputs_allocate_nothing_per_packet() {
    outputs_allocate_nothing(
        &lwarscope::proto::vessel::INFO,
        &["vessel-faults.pcap", "vessel-clean.pcap"],
    );
}

/// Starstrike through `starstrike.ksy`: its repeated packets' texts and
/// trees copied (`described/bodies.rs`, `described/trees.rs`).
#[test]
fn described_outputs_allocate_nothing_per_packet() {
    for (id, capture) in [
        ("vessel_fixed", "ksy-vessel-faults.pcap"),
        ("timewarp", "ksy-timewarp-faults.pcap"),
        ("strs_ksy", "strs-clean.pcap"),
    ] {
        let described = lwarscope::proto::described::loaded()
            .iter()
            .find(|d| d.ksy.id == id)
            .unwrap();
        outputs_allocate_nothing(described.info(), &[capture]);
    }
}
