//! Steady-state tracking allocates nothing per packet: after a warm-up, a long
//! stream of Input, Update and reliable packets of a known session (with resends,
//! gaps, fills and input gaps among them, so findings are raised too) goes
//! through `Tracker::observe` without one heap allocation.
//!
//! The counting allocator counts per thread, so the test harness's other threads
//! do not disturb the count.

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer};
use lwarscope::proto::lwar::Tracker;
use lwarscope::proto::lwar::wire::{Header, Id, Input, MessageRepr, PacketRepr, UpdateEntry};
use std::net::SocketAddr;

use crate::counting_alloc;

use counting_alloc::allocations;

/// Counts what it is told, without allocating.
#[derive(Default)]
struct Tally {
    packets: u64,
    findings: u64,
}

impl Observer for Tally {
    fn packet(&mut self, _: &lwarscope::engine::PacketEvent<'_>) -> lwarscope::engine::Flow {
        self.packets += 1;
        lwarscope::engine::Flow::Continue
    }
    fn finding(&mut self, _: &Finding) {
        self.findings += 1;
    }
}

const ALICE: Id = Id::new(0, 1);

fn packet(ack: u32, timestamp: u32, messages: Vec<MessageRepr>) -> Vec<u8> {
    PacketRepr {
        header: Header { ack, timestamp },
        messages,
    }
    .to_bytes()
}

fn input(frame: u32) -> MessageRepr {
    MessageRepr::Input(Input {
        player: ALICE,
        frame,
        forward: 1,
        ..Input::default()
    })
}

fn update(n: u16) -> MessageRepr {
    MessageRepr::Update(
        (0..n)
            .map(|i| UpdateEntry {
                entity: Id::new(1, i),
                x: i as i16,
                y: -(i as i16),
                orientation: 90,
                health: 100,
            })
            .collect(),
    )
}

fn chat(seqno: u32, text: &str) -> MessageRepr {
    MessageRepr::Chat {
        seqno,
        player: ALICE,
        text: text.into(),
    }
}

/// `(from_client, payload)`: a connected, synced session, then `rounds` rounds of
/// client Input and server Update, with reliable traffic both ways.
fn stream(rounds: u32) -> Vec<(bool, Vec<u8>)> {
    let mut out = vec![
        (
            true,
            packet(
                0,
                0,
                vec![MessageRepr::Connect {
                    seqno: 1,
                    name: "alice".into(),
                }],
            ),
        ),
        (
            false,
            packet(
                1,
                1000,
                vec![
                    MessageRepr::Join {
                        seqno: 1,
                        player: ALICE,
                        name: "alice".into(),
                    },
                    MessageRepr::Join {
                        seqno: 2,
                        player: Id::new(0, 0),
                        name: "server".into(),
                    },
                    MessageRepr::Synced { seqno: 3 },
                ],
            ),
        ),
    ];
    let (mut s2c_seqno, mut c2s_seqno, mut frame) = (3u32, 1u32, 0u32);
    for round in 0..rounds {
        // The client: an Input every round (every 50th round skips 3 frames: an
        // input gap), a Chat every 10th.
        frame += if round % 50 == 49 { 4 } else { 1 };
        let mut c = vec![input(frame)];
        if round % 10 == 0 {
            c2s_seqno += 1;
            c.push(chat(c2s_seqno, "gg"));
        }
        out.push((true, packet(s2c_seqno, 2000 + round, c)));
        // The server: an Update every round and a reliable Chat every other round;
        // every 20th round repeats the last one (already acked, and with other
        // bytes: a spurious resend and a violation), and every 30th skips a seqno
        // that the next Chat fills.
        let mut s = vec![update(5)];
        if round % 2 == 0 {
            if round % 30 == 0 {
                s2c_seqno += 2;
                s.push(chat(s2c_seqno, "jump"));
            } else if round % 30 == 2 {
                s.push(chat(s2c_seqno - 1, "fill"));
                s2c_seqno += 1;
                s.push(chat(s2c_seqno, "next"));
            } else {
                s2c_seqno += 1;
                s.push(chat(s2c_seqno, "hello"));
            }
        }
        if round % 20 == 19 {
            s.push(chat(s2c_seqno, "again"));
        }
        out.push((false, packet(c2s_seqno, 50_000 + round, s)));
    }
    out
}

#[test]
fn steady_state_tracking_allocates_nothing_per_packet() {
    const WARM_UP: usize = 2_000;
    const ROUNDS: u32 = 40_000;
    let packets = stream(ROUNDS);
    let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let server: SocketAddr = "127.0.0.1:32422".parse().unwrap();
    let mut tracker = Tracker::default();
    let mut tally = Tally::default();
    let mut before = 0;
    for (i, (from_client, payload)) in packets.iter().enumerate() {
        if i == WARM_UP {
            before = allocations();
        }
        let (src, dst) = if *from_client {
            (client, server)
        } else {
            (server, client)
        };
        let d = Datagram::new(
            i as u64 + 1,
            Timestamp::from_millis(1_704_067_200_000 + 15 * i as u64),
            src,
            dst,
            payload,
        );
        tracker.observe(&d, &mut tally);
    }
    let during = allocations() - before;
    let measured = packets.len() - WARM_UP;
    assert_eq!(tally.packets as usize, packets.len());
    // The stream does raise findings on the way (resends, gaps, fills, input
    // gaps): raising them allocates nothing either.
    assert!(tally.findings > 1_000, "{} findings", tally.findings);
    assert_eq!(
        during, 0,
        "{during} allocations over {measured} steady-state packets"
    );
    // The reliable sequence went far past the 512-seqno window.
    let (_, session) = tracker.sessions().next().unwrap();
    assert!(session.s2c.first_sends > 10 * 512);
    assert_eq!(
        session
            .s2c
            .finding_count(lwarscope::engine::FindingKind::GAP),
        1_334
    );
}
