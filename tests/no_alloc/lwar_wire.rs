//! Decoding a packet allocates nothing: header, messages, entries, strings,
//! violations, tokens and one-line displays, on good and bad bytes alike.
//!
//! A counting global allocator counts the allocations of the current thread only,
//! so the test harness's own threads cannot disturb the count.

use lwarscope::proto::lwar::wire::{
    DecodeError, Header, Id, Message, MessageRepr, Packet, PacketBuilder, UpdateEntry,
};
use std::fmt::{self, Write};
use std::hint::black_box;

use crate::common::vectors;
use crate::counting_alloc;

use counting_alloc::allocations_of;

/// A `fmt::Write` into a fixed buffer, so that displaying allocates nothing.
struct Sink {
    buf: [u8; 4096],
    len: usize,
}

impl Write for Sink {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Wrap around rather than fail: only the absence of allocation matters here.
        for &b in s.as_bytes() {
            self.buf[self.len % self.buf.len()] = b;
            self.len += 1;
        }
        Ok(())
    }
}

/// Everything a consumer of the codec does with a packet, without keeping anything.
fn decode(bytes: &[u8], sink: &mut Sink) -> usize {
    let mut touched = 0usize;
    let packet = match Packet::new_checked(bytes) {
        Ok(p) => p,
        Err(e) => {
            write!(sink, "{e}").unwrap();
            return e.offset();
        }
    };
    touched += black_box(packet.header()).ack as usize;
    touched += packet.oversize().map_or(0, |v| v.offset());
    let mut messages = packet.messages();
    for item in messages.by_ref() {
        let view = match item {
            Ok(view) => view,
            Err(e) => {
                write!(sink, "{e} {:?}", e.kind()).unwrap();
                break;
            }
        };
        for v in view.violations() {
            write!(sink, "{v}").unwrap();
            touched += v.offset();
        }
        write!(sink, "{} {}", view.message.token(), view.message).unwrap();
        if let Some(s) = view.message.string() {
            touched += s.to_str().map_or(0, str::len) + usize::from(s.is_utf8());
        }
        touched += match view.message {
            Message::Stats(e) => e.iter().map(|s| s.ping as usize).sum(),
            Message::Update(e) => e.iter().map(|u| u.health as usize).sum(),
            Message::UpdatePos(e) => e.iter().map(|u| u.x as usize).sum(),
            Message::UpdateRay(e) => e.iter().map(|u| u.length as usize).sum(),
            Message::UpdateCircle(e) => {
                e.iter().map(|u| u.radius as usize).sum::<usize>()
                    + e.get(0).map_or(0, |u| u.y as usize)
            }
            Message::Input(i) => i.frame as usize,
            other => other.seqno().unwrap_or(0) as usize,
        };
    }
    touched + messages.undecoded().map_or(0, |(at, rest)| at + rest.len())
}

/// Every payload of the real capture, then packets with every message type,
/// violations and each kind of decode error.
fn payloads() -> Vec<Vec<u8>> {
    let mut all = vectors::real_server_payloads();

    let mut b = PacketBuilder::with_limit(usize::MAX);
    b.start(Header {
        ack: 1,
        timestamp: 2,
    });
    let p = Id::new(0, 1);
    b.fill(
        &[
            MessageRepr::Connect {
                seqno: 0,
                name: vec![0xff; 40],
            },
            MessageRepr::Join {
                seqno: 1,
                player: p,
                name: b"bob".to_vec(),
            },
            MessageRepr::Chat {
                seqno: 2,
                player: p,
                text: vec![b'c'; 255],
            },
            MessageRepr::Name {
                seqno: 3,
                player: p,
                name: "é".into(),
            },
            MessageRepr::Selection {
                seqno: 4,
                player: p,
                ship_type: 1,
                weapon_types: [1, 2, 3, 4],
            },
            MessageRepr::Add {
                seqno: 5,
                entity: p,
                player: p,
                type_id: 1,
            },
            MessageRepr::Remove {
                seqno: 6,
                entity: p,
            },
            MessageRepr::Leave {
                seqno: 7,
                player: p,
            },
            MessageRepr::Synced { seqno: 8 },
            MessageRepr::Disconnect { seqno: 9 },
        ],
        &[
            MessageRepr::Stats(vec![Default::default(); 3]),
            MessageRepr::Input(Default::default()),
            MessageRepr::Full,
            MessageRepr::Collision(Default::default()),
            MessageRepr::Update(vec![
                UpdateEntry {
                    x: -5,
                    ..Default::default()
                };
                40
            ]),
            MessageRepr::Update(vec![]),
            MessageRepr::UpdatePos(vec![Default::default(); 2]),
            MessageRepr::UpdateRay(vec![Default::default(); 2]),
            MessageRepr::UpdateCircle(vec![Default::default(); 2]),
        ],
    );
    let every_type = b.bytes().to_vec();
    assert!(every_type.len() > 512, "oversize too");
    // Truncated, unknown type, deprecated type, short header, wrong appId.
    all.push(every_type[..every_type.len() - 3].to_vec());
    all.push([&every_type[..40], &[11, 0, 0]].concat());
    all.push([&every_type[..40], &[102, 0, 0]].concat());
    all.push(every_type[..7].to_vec());
    all.push([&[0, 1, 2, 3][..], &every_type[4..]].concat());
    all.push(every_type);
    all
}

#[test]
fn the_counter_sees_allocations() {
    // Without this, a broken counter would make the next test pass vacuously.
    let n = allocations_of(|| {
        black_box(Vec::<u8>::with_capacity(16));
        black_box(String::from("x").repeat(3));
    });
    assert!(n >= 2, "counted {n}");
}

#[test]
fn decoding_allocates_nothing() {
    let payloads = payloads();
    let mut sink = Sink {
        buf: [0; 4096],
        len: 0,
    };
    // Decode once before counting, so that nothing lazily set up is counted.
    for p in &payloads {
        decode(p, &mut sink);
    }
    let mut total = 0;
    let n = allocations_of(|| {
        for p in &payloads {
            total += decode(black_box(p), &mut sink);
        }
    });
    assert_eq!(
        n,
        0,
        "decoding {} payloads allocated {n} times",
        payloads.len()
    );
    assert!(total > 0 && sink.len > 0, "the decode really ran");

    // And the packets did hit every path: a sanity check of the inputs.
    let errors: Vec<DecodeError> = payloads
        .iter()
        .filter_map(|p| match Packet::new_checked(p) {
            Err(e) => Some(e),
            Ok(packet) => packet.messages().find_map(Result::err),
        })
        .collect();
    assert_eq!(errors.len(), 5, "{errors:?}");
}
