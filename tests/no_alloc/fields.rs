//! `-T fields` allocates nothing per packet: every column's buffer is reused,
//! with repeated fields aggregated, findings as a field, and frame fields, over
//! every packet of the real server's capture.
//!
//! The counting allocator counts per thread, so the test harness's other threads
//! do not disturb the count.

use crate::common;

use common::{real_server_vectors, vector_datagrams};
use lwarscope::capture::Timestamp;
use lwarscope::engine::{Detail, Direction, Finding, FindingKind, Observer, PacketEvent};
use lwarscope::report::Filter;
use lwarscope::report::fields::{FieldsFormat, FieldsWriter};

use crate::counting_alloc;

use counting_alloc::allocations;

#[test]
fn field_output_allocates_nothing_per_packet() {
    let vectors = real_server_vectors();
    let datagrams = vector_datagrams(&vectors, std::net::Ipv6Addr::LOCALHOST.into());
    let findings = [Finding {
        kind: FindingKind::RESEND,
        rule: None,
        frame: 1,
        ts: Timestamp(0),
        session: 0,
        direction: Direction::ServerToClient,
        seqno: Some(3),
        detail: Detail::None,
    }; 2];
    let names: Vec<String> = [
        "frame.number",
        "frame.time_epoch",
        "frame.time_relative",
        "frame.len",
        "frame.cap_len",
        "ipv6.src",
        "udp.srcport",
        "lwarscope.session",
        "lwarscope.dir",
        "lwarscope.finding",
        "lwar.seqno",
        "lwar.type",
        "lwar.name",
        "lwar.input.aim_x",
        "lwar.player",
    ]
    .map(str::to_owned)
    .to_vec();
    let format = FieldsFormat::parse(&["header=y", "quote=d"]).unwrap();
    let filter = Filter::parse("!Connect").unwrap();
    let mut writer =
        FieldsWriter::new(Vec::with_capacity(16 << 20), &names, format, Some(filter)).unwrap();
    let pass = |writer: &mut FieldsWriter<Vec<u8>>| {
        for (i, d) in datagrams.iter().enumerate() {
            let attached = if i % 5 == 0 { &findings[..] } else { &[] };
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
            writer.packet(&event);
        }
    };
    // Warm-up: the column buffers find their size.
    pass(&mut writer);
    let before = allocations();
    for _ in 0..4 {
        pass(&mut writer);
    }
    let after = allocations();
    assert_eq!(after - before, 0, "allocations over 4 passes");
    let out = String::from_utf8(writer.finish().unwrap()).unwrap();
    assert!(out.starts_with("frame.number\tframe.time_epoch\t"));
    assert!(out.lines().count() > datagrams.len() * 4, "lines written");
    assert!(out.contains("resend,resend"));
}
