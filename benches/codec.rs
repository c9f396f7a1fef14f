//! Decoding and encoding typical lwar packets, taken from the real server's capture
//! (`tests/fixtures/real-server-clean.tsv`): the server's handshake answer, a
//! client Input packet, the server packet with the most Update entries, and the
//! whole capture in order. Each is measured in bytes/s and in messages/s.
//!
//! `cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lwarscope::proto::lwar::wire::{
    Header, Message, MessageRepr, Packet, PacketBuilder, PacketRepr,
};
use std::hint::black_box;

#[path = "../tests/common/vectors.rs"]
mod vectors;

/// A named list of payloads, measured together.
struct Case {
    name: &'static str,
    payloads: Vec<Vec<u8>>,
}

impl Case {
    fn bytes(&self) -> u64 {
        self.payloads.iter().map(|p| p.len() as u64).sum()
    }

    fn messages(&self) -> u64 {
        self.payloads
            .iter()
            .map(|p| Packet::new_checked(p).unwrap().messages().count() as u64)
            .sum()
    }
}

fn cases() -> Vec<Case> {
    let capture = vectors::real_server_payloads();
    let first_with = |pred: &dyn Fn(&[Message<'_>]) -> bool| {
        capture
            .iter()
            .find(|p| {
                let packet = Packet::new_checked(p).unwrap();
                let messages: Vec<_> = packet.messages().map(|m| m.unwrap().message).collect();
                pred(&messages)
            })
            .expect("the capture has such a packet")
            .clone()
    };
    // The server's answer to Connect: Joins, Adds, ... starting with Join#1.
    let handshake = first_with(&|m| matches!(m.first(), Some(Message::Join { seqno: 1, .. })));
    let input = first_with(&|m| matches!(m, [Message::Input(_)]));
    let update_entries = |p: &[u8]| -> usize {
        Packet::new_checked(p)
            .unwrap()
            .messages()
            .filter_map(|m| match m.unwrap().message {
                Message::Update(e) => Some(e.len()),
                _ => None,
            })
            .sum()
    };
    let update = capture
        .iter()
        .max_by_key(|p| update_entries(p))
        .unwrap()
        .clone();
    vec![
        Case {
            name: "handshake",
            payloads: vec![handshake],
        },
        Case {
            name: "input",
            payloads: vec![input],
        },
        Case {
            name: "update",
            payloads: vec![update],
        },
        Case {
            name: "capture",
            payloads: capture,
        },
    ]
}

/// What a consumer does: header, every message, every entry, the violations.
fn decode(payload: &[u8]) -> u64 {
    let packet = Packet::new_checked(payload).unwrap();
    let mut acc = u64::from(packet.ack()) + u64::from(packet.oversize().is_some());
    for m in packet.messages() {
        let view = m.unwrap();
        acc += view.violations().count() as u64;
        acc += match view.message {
            Message::Update(e) => e.iter().map(|u| u64::from(u.orientation)).sum(),
            Message::UpdatePos(e) => e.iter().map(|u| u.x as u64).sum(),
            Message::UpdateRay(e) => e.iter().map(|u| u64::from(u.length)).sum(),
            Message::UpdateCircle(e) => e.iter().map(|u| u64::from(u.radius)).sum(),
            Message::Stats(e) => e.iter().map(|s| u64::from(s.ping)).sum(),
            Message::Input(i) => u64::from(i.frame),
            other => u64::from(other.seqno().unwrap_or(0)),
        };
    }
    acc
}

fn bench_decode(c: &mut Criterion) {
    for case in cases() {
        for (unit, throughput) in [
            ("bytes", Throughput::Bytes(case.bytes())),
            ("messages", Throughput::Elements(case.messages())),
        ] {
            let mut group = c.benchmark_group(format!("decode/{unit}"));
            group.throughput(throughput);
            group.bench_with_input(BenchmarkId::from_parameter(case.name), &case, |b, case| {
                b.iter(|| {
                    case.payloads
                        .iter()
                        .map(|p| decode(black_box(p)))
                        .sum::<u64>()
                })
            });
            group.finish();
        }
    }
}

fn bench_encode(c: &mut Criterion) {
    for case in cases() {
        // The queues as a peer would hold them: reliable and unreliable apart.
        let packets: Vec<(Header, Vec<MessageRepr>, Vec<MessageRepr>)> = case
            .payloads
            .iter()
            .map(|p| {
                let repr = PacketRepr::parse(p).unwrap();
                let (reliable, unreliable) = repr
                    .messages
                    .into_iter()
                    .partition(MessageRepr::is_reliable);
                (repr.header, reliable, unreliable)
            })
            .collect();
        for (unit, throughput) in [
            ("bytes", Throughput::Bytes(case.bytes())),
            ("messages", Throughput::Elements(case.messages())),
        ] {
            let mut group = c.benchmark_group(format!("encode/{unit}"));
            group.throughput(throughput);
            group.bench_with_input(
                BenchmarkId::from_parameter(case.name),
                &packets,
                |b, packets| {
                    let mut builder = PacketBuilder::new();
                    b.iter(|| {
                        let mut len = 0;
                        for (header, reliable, unreliable) in packets {
                            builder.start(*header);
                            builder.fill(reliable, unreliable);
                            len += black_box(builder.bytes()).len();
                        }
                        len
                    })
                },
            );
            group.finish();
        }
    }
}

criterion_group!(benches, bench_decode, bench_encode);
criterion_main!(benches);
