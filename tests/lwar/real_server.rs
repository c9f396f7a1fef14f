//! The tracker on the original lwar server's traffic (`tests/fixtures/real-server-clean.tsv`,
//! copied from `shared/vectors/`): two clients, alice (port 38379, player 0:1) and
//! bob (port 45754, player 0:2, renamed "bobby"), connect, play, chat and
//! disconnect gracefully; no fault was injected.
//!
//! What the payloads show, counted independently of the tracker (by walking the
//! fixture's frames by port):
//! - no seqno is ever skipped, reordered or repeated, except the server's Leave
//!   messages to the two clients after their Disconnect: Leave #22 (alice's own)
//!   to alice 28 times again, Leave #20 (bob's own) to bob 52 times again, and
//!   Leave #21 (alice's Leave, broadcast to bob after bob had left) to bob 28
//!   times again: 108 repeats, one `expected-repeat` per Leave (three);
//! - no header timestamp goes back (the clients' Connect packets are stamped 0),
//!   no ack goes back, no payload repeats, every packet decodes, none is over 512;
//! - Input frames run 1..=120 (alice) and 1..=90 (bob), without a gap;
//! - the original server does not stop sending Update after a client's Disconnect,
//!   and it also sends bob the Leave of alice: those are the `after-disconnect`
//!   violations, one incident per session (see the test for the exact list).

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Detail, Direction, Finding, FindingKind, Observer, Summary};
use lwarscope::proto::lwar::wire::Id;
use lwarscope::proto::lwar::{State, Tracker};
use std::collections::BTreeMap;
use std::net::{Ipv6Addr, SocketAddr};

const SERVER_PORT: u16 = 32422;
const ALICE_PORT: u16 = 38379;
const BOB_PORT: u16 = 45754;
/// Frames of the clients' Disconnect messages.
const ALICE_DISCONNECT: u64 = 467;
const BOB_DISCONNECT: u64 = 397;
/// Capture time: 9 ms per frame (the server's header clock runs 1658..6479 ms
/// over the 525 frames).
const START_NS: u64 = 1_704_067_200_000_000_000;
const STEP_NS: u64 = 9_000_000;

use crate::common::vectors;

use vectors::real_server as rows;

fn v6(port: u16) -> SocketAddr {
    SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port)
}

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

fn run() -> (Tracker, Vec<Finding>, Summary) {
    let mut tracker = Tracker::default();
    let mut seen = Collect::default();
    for row in rows() {
        let d = Datagram::new(
            row.frame,
            Timestamp(START_NS + row.frame * STEP_NS),
            v6(row.src_port),
            v6(row.dst_port),
            &row.payload,
        );
        tracker.observe(&d, &mut seen);
    }
    let summary = tracker.finish(&mut seen);
    (tracker, seen.0, summary)
}

/// A finding as compared here: session, label, frame, seqno, detail.
type F = (usize, String, u64, Option<u32>, Detail);

/// The one `after-disconnect` of a session: its first message (an Update,
/// frame `frame`), how many, in how many packets, until which frame.
fn after_disconnect(session: usize, frame: u64, messages: u32, packets: u32, last: u64) -> F {
    let run = lwarscope::engine::RunSpan {
        frame,
        ts: Timestamp(START_NS + frame * STEP_NS),
        seqno: None,
        messages,
        packets,
        last_frame: last,
    };
    (
        session,
        "violation/after-disconnect".into(),
        frame,
        None,
        lwarscope::proto::lwar::findings::after_disconnect(
            lwarscope::proto::lwar::wire::MessageType::Update,
            run.frame,
            run.tail(),
        ),
    )
}

/// The one `expected-repeat` of a Leave first sent in frame `first`,
/// repeated in `repeats` (one a packet).
fn expected_repeats(session: usize, seqno: u32, first: u64, repeats: &[u64]) -> F {
    let run = lwarscope::engine::RunSpan {
        frame: repeats[0],
        ts: Timestamp(START_NS + repeats[0] * STEP_NS),
        seqno: Some(seqno),
        messages: repeats.len() as u32,
        packets: repeats.len() as u32,
        last_frame: *repeats.last().unwrap(),
    };
    (
        session,
        "expected-repeat".into(),
        repeats[0],
        Some(seqno),
        lwarscope::proto::lwar::findings::expected_repeats(first, run.tail()),
    )
}

/// The exact findings, built from the fixture's frame list by port alone.
fn expected_findings() -> Vec<F> {
    let rows = rows();
    let to = |port: u16, after: u64| -> Vec<u64> {
        rows.iter()
            .filter(|r| r.src_port == SERVER_PORT && r.dst_port == port && r.frame > after)
            .map(|r| r.frame)
            .collect()
    };
    // Alice (session 0): every packet of the server after her Disconnect carries
    // her own Leave #22 and an Update. The first Leave (frame 468) is its first
    // send; each later one is an expected repeat; every Update is a violation.
    let alice = to(ALICE_PORT, ALICE_DISCONNECT);
    assert_eq!(alice.len(), 29);
    assert_eq!((alice[0], alice[28]), (468, 524));
    // Bob (session 1): every packet after his Disconnect carries his own Leave #20
    // and an Update; from frame 469 (alice's Disconnect having been processed),
    // also alice's Leave #21, which bob must not be sent after his Disconnect.
    let bob = to(BOB_PORT, BOB_DISCONNECT);
    assert_eq!(bob.len(), 53);
    assert_eq!((bob[0], bob[52]), (399, 525));

    // Each Leave's repeats are one incident, and the Updates after the
    // Disconnect one `after-disconnect`: all reported when the capture ends,
    // session by session (the Leaves by their first send).
    let bob_other: Vec<u64> = bob.iter().copied().filter(|&f| f >= 469).collect();
    let alice_messages = alice.len() as u32;
    let bob_messages = (bob.len() + bob_other.len()) as u32;
    vec![
        expected_repeats(0, 22, 468, &alice[1..]),
        after_disconnect(0, 468, alice_messages, 29, 524),
        expected_repeats(1, 20, 399, &bob[1..]),
        expected_repeats(1, 21, 469, &bob_other[1..]),
        after_disconnect(1, 399, bob_messages, 53, 525),
    ]
}

#[test]
fn the_real_server_raises_exactly_its_expected_repeats_and_after_disconnect_violations() {
    let (_, findings, _) = run();
    let got: Vec<F> = findings
        .iter()
        .map(|f| {
            assert_eq!(f.direction, Direction::ServerToClient, "{f:?}");
            (f.session, f.label().to_string(), f.frame, f.seqno, f.detail)
        })
        .collect();
    let want = expected_findings();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "finding {i}");
    }
    // One expected repeat per repeated Leave (28 + 52 + 28 repeats); one
    // violation per session, over 29 Updates to alice, and 53 Updates and 29
    // Leaves of alice to bob.
    let count = |label: &str| got.iter().filter(|g| g.1 == label).count();
    assert_eq!(count("expected-repeat"), 3);
    assert_eq!(count("violation/after-disconnect"), 2);
    assert_eq!(
        got[2].4.to_string(),
        "Leave first sent in frame 399; 52 repeats until frame 525"
    );
    assert_eq!(
        got.last().unwrap().4.to_string(),
        "Update in frame 399; 82 messages in 53 packets until frame 525"
    );
}

#[test]
fn the_real_server_has_no_loss_reorder_malformed_duplicate_or_resend() {
    let (tracker, findings, summary) = run();
    let counts = |pairs: &[(&str, u64)]| -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    assert_eq!(
        summary.findings,
        counts(&[("expected-repeat", 3), ("violation", 2)])
    );
    assert_eq!(summary.violations, counts(&[("after-disconnect", 2)]));
    assert!(summary.malformed.is_empty());
    for kind in [
        FindingKind::GAP,
        FindingKind::LOST,
        FindingKind::OUT_OF_ORDER,
        FindingKind::REORDERED,
        FindingKind::MALFORMED,
        FindingKind::TRUNCATED,
        FindingKind::DUPLICATE_PACKET,
        FindingKind::DUPLICATE_IN_PACKET,
        FindingKind::RESEND,
        FindingKind::SPURIOUS_RESEND,
    ] {
        assert!(!findings.iter().any(|f| f.kind == kind), "{kind}");
    }
    assert!(findings.iter().all(
        |f| f.kind == lwarscope::proto::lwar::findings::EXPECTED_REPEAT
            || f.rule == Some(lwarscope::proto::lwar::findings::rules::AFTER_DISCONNECT)
    ));

    // Both sessions, in order of appearance, closed, with their players.
    let sessions: Vec<_> = tracker.sessions().map(|(_, s)| s).collect();
    assert_eq!(sessions.len(), 2);
    let (alice, bob) = (sessions[0], sessions[1]);
    assert_eq!(
        (alice.client, alice.server),
        (v6(ALICE_PORT), v6(SERVER_PORT))
    );
    assert_eq!((bob.client, bob.server), (v6(BOB_PORT), v6(SERVER_PORT)));
    for s in [alice, bob] {
        assert_eq!(s.proto.state, State::Closed);
        assert!(s.proto.saw_start);
        assert_eq!(s.proto.rejected_attempts, 0);
        // The resend rate leaves the expected repeats out.
        assert_eq!(s.c2s.resends + s.s2c.resends, 0);
        assert_eq!(s.s2c.resend_rate(), 0.0);
    }
    let alice_player = alice.proto.player.as_ref().unwrap();
    assert_eq!(alice_player.id, Id::new(0, 1));
    assert_eq!(alice_player.name, "alice");
    assert_eq!((alice_player.renames, alice_player.chats), (0, 3));
    let bob_player = bob.proto.player.as_ref().unwrap();
    assert_eq!(bob_player.id, Id::new(0, 2));
    // Bob renamed himself once (his Name request and the server's broadcast).
    assert_eq!(bob_player.name, "bobby");
    assert_eq!((bob_player.renames, bob_player.chats), (1, 2));

    // Reliable first sends: alice sent #1..#6 and got #1..#22; bob sent #1..#6
    // and got #1..#21. Expected repeats: 28 to alice, 80 to bob.
    assert_eq!((alice.c2s.first_sends, alice.s2c.first_sends), (6, 22));
    assert_eq!((bob.c2s.first_sends, bob.s2c.first_sends), (6, 21));
    assert_eq!(
        (alice.s2c.expected_repeats, bob.s2c.expected_repeats),
        (28, 80)
    );

    // Packets and bytes, counted from the fixture by port.
    let rows = rows();
    for (s, port) in [(alice, ALICE_PORT), (bob, BOB_PORT)] {
        let sum = |src: u16, dst: u16| {
            let rows: Vec<_> = rows
                .iter()
                .filter(|r| r.src_port == src && r.dst_port == dst)
                .collect();
            (
                rows.len() as u64,
                rows.iter().map(|r| r.payload.len() as u64).sum::<u64>(),
            )
        };
        assert_eq!((s.c2s.packets, s.c2s.bytes), sum(port, SERVER_PORT));
        assert_eq!((s.s2c.packets, s.s2c.bytes), sum(SERVER_PORT, port));
    }
    assert_eq!(summary.sessions[0].c2s.messages["Input"], 120);
    assert_eq!(summary.sessions[1].c2s.messages["Input"], 90);
    assert_eq!(summary.messages["Leave"], 30 + 82);
    assert_eq!(summary.sessions[0].state, "closed");
    assert_eq!(summary.sessions[1].state, "closed");
}
