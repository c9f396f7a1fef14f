//! Battlegrounds' steady state allocates nothing per packet: after a warm-up, a
//! long stream of PING/PONG, MOVE_OP/MOVE_EVENT (with sig gaps), one-block
//! messages and their acks (with resends, network duplicates and skipped
//! msg_ids, so findings are raised) goes through `Tracker::observe` without one
//! heap allocation. Multi-block messages allocate their bounded buffers, by
//! design, and are left out.

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer, TrackerConfig};
use lwarscope::proto::battlegrounds::Tracker;
use lwarscope::proto::battlegrounds::wire::{
    MoveEvent, MoveOp, Movement, MsgAck, PacketRepr, PayloadRepr, Tag, VectorD,
};
use std::net::SocketAddr;

use crate::counting_alloc;

use counting_alloc::allocations;

#[derive(Default)]
struct Tally(u64);

impl Observer for Tally {
    fn finding(&mut self, _: &Finding) {
        self.0 += 1;
    }
}

const SID: u32 = 77;

fn bytes(channel: u8, payload: PayloadRepr) -> Vec<u8> {
    PacketRepr::new(SID, channel, payload).to_bytes().unwrap()
}

/// The packets of step `i`, as (client to server?, bytes).
fn step(i: u32) -> Vec<(bool, Vec<u8>)> {
    let movement = Movement {
        timestamp: i64::from(i),
        position: VectorD { x: 1.0, y: 2.0 },
        ..Movement::default()
    };
    let sig = (i % 256) as u8;
    let mut out = vec![
        (true, bytes(0, PayloadRepr::Ping)),
        (
            false,
            bytes(
                0,
                PayloadRepr::Pong {
                    timestamp: i64::from(i),
                },
            ),
        ),
        (
            true,
            bytes(
                1,
                PayloadRepr::MoveOp(MoveOp {
                    movement,
                    op_sig: sig,
                }),
            ),
        ),
    ];
    // Every 7th event skips a value: sig-gap findings.
    let event_sig = (i + i / 7) as u8;
    out.push((
        false,
        bytes(
            1,
            PayloadRepr::MoveEvent(MoveEvent {
                movement,
                op_sig: sig,
                event_sig,
            }),
        ),
    ));
    // A one-block PROP message; every 5th msg_id is skipped (lost), every 3rd
    // block is resent, every 4th ack is duplicated.
    let msg_id = i + i / 5;
    let prop = bytes(
        2,
        PayloadRepr::PropCircle {
            prop_id: i64::from(i),
            position: VectorD::default(),
            shape_type: Tag,
            center: Default::default(),
            radius: 1.0,
            render_data: vec![1; 16],
        },
    );
    let block = PacketRepr::split_message(SID, 2, msg_id, &prop, 512)
        .remove(0)
        .to_bytes()
        .unwrap();
    out.push((false, block.clone()));
    if i.is_multiple_of(3) {
        out.push((false, block));
    }
    let ack = bytes(
        2,
        PayloadRepr::MsgAck(MsgAck {
            msg_id,
            block_id: 0,
        }),
    );
    out.push((true, ack.clone()));
    if i.is_multiple_of(4) {
        out.push((true, ack));
    }
    out
}

#[test]
fn the_steady_state_does_not_allocate() {
    let client: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let server: SocketAddr = "10.0.0.2:6000".parse().unwrap();
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut tally = Tally::default();
    let steps: Vec<_> = (0..4000u32).map(step).collect();
    let auth = bytes(0, PayloadRepr::Auth);
    let mut frame = 0u64;
    let mut feed =
        |tracker: &mut Tracker, tally: &mut Tally, c2s: bool, payload: &[u8], ms: u64| {
            frame += 1;
            let (src, dst) = if c2s {
                (client, server)
            } else {
                (server, client)
            };
            let d = Datagram::new(frame, Timestamp(ms * 1_000_000), src, dst, payload);
            tracker.observe(&d, tally);
        };
    feed(&mut tracker, &mut tally, true, &auth, 1);
    let mut before = 0;
    for (i, packets) in steps.iter().enumerate() {
        if i == steps.len() / 2 {
            before = allocations();
        }
        for (k, (c2s, p)) in packets.iter().enumerate() {
            // 200 ms a step, 20 ms between packets: a block or ack repeated
            // 20 ms later is a network duplicate.
            feed(
                &mut tracker,
                &mut tally,
                *c2s,
                p,
                10 + i as u64 * 200 + k as u64 * 20,
            );
        }
    }
    let during = allocations() - before;
    assert!(tally.0 > 1000, "{} findings", tally.0);
    assert_eq!(during, 0, "{during} allocations over the second half");
}
