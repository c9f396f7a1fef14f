//! The simulated peers deliver every reliable message exactly once and in order,
//! through a network that loses, duplicates, delays and reorders datagrams.

use lwarscope::proto::lwar::sim::{ClientState, Faults, VirtualConfig, run_logged};
use lwarscope::proto::lwar::wire::MessageRepr;

fn hostile() -> Faults {
    Faults {
        loss: 0.10,
        duplicate: 0.05,
        reorder: 0.05,
        latency_us: 8_000,
        jitter_us: 6_000,
        ..Faults::default()
    }
}

fn is_prefix(short: &[MessageRepr], long: &[MessageRepr]) -> bool {
    short.len() <= long.len() && short == &long[..short.len()]
}

#[test]
fn reliable_messages_arrive_once_and_in_order_through_a_hostile_network() {
    let mut closed = 0;
    for seed in 0..12 {
        let mut cfg = VirtualConfig::clean(seed, 4, 14);
        cfg.c2s = hostile();
        cfg.s2c = hostile();
        for (k, c) in run_logged(&cfg).into_iter().enumerate() {
            let who = format!("seed {seed} client {k}");
            // Client to server: everything up to and including Disconnect was
            // processed, once each, in order (the Leave proves the Disconnect was).
            assert_eq!(c.state, ClientState::Closed, "{who}");
            closed += 1;
            assert_eq!(c.server_received, c.client_sent, "{who}");
            assert!(matches!(
                c.client_sent.last(),
                Some(MessageRepr::Disconnect { .. })
            ));
            // Server to client: a prefix (the client stops at Leave), with the
            // whole handshake in it and seqnos 1, 2, 3... without a hole.
            assert!(is_prefix(&c.client_received, &c.server_sent), "{who}");
            assert!(matches!(
                c.client_received.first(),
                Some(MessageRepr::Join { seqno: 1, .. })
            ));
            assert!(
                c.client_received
                    .iter()
                    .any(|m| matches!(m, MessageRepr::Synced { .. })),
                "{who}"
            );
            for (i, m) in c.client_received.iter().enumerate() {
                assert_eq!(m.seqno(), Some(i as u32 + 1), "{who}");
            }
            assert!(c.client_received.len() > 10, "{who}: too little traffic");
        }
    }
    assert_eq!(closed, 48);
}

#[test]
fn a_ninth_client_is_refused_and_the_others_play() {
    let cfg = VirtualConfig::clean(3, 9, 6);
    let clients = run_logged(&cfg);
    let states: Vec<_> = clients.iter().map(|c| c.state).collect();
    assert_eq!(&states[..8], &[ClientState::Closed; 8]);
    assert_eq!(states[8], ClientState::Rejected);
    assert!(clients[8].server_received.is_empty());
}

#[test]
fn a_crashed_client_is_timed_out_and_the_others_hear_its_leave() {
    let mut cfg = VirtualConfig::clean(4, 3, 22);
    cfg.crash = 1;
    let clients = run_logged(&cfg);
    assert_eq!(clients[2].state, ClientState::Crashed);
    let crashed = clients[2]
        .client_received
        .iter()
        .find_map(|m| match m {
            MessageRepr::Join {
                seqno: 1, player, ..
            } => Some(*player),
            _ => None,
        })
        .expect("the crashed client had joined");
    for c in &clients[..2] {
        assert_eq!(c.state, ClientState::Closed);
        assert!(
            c.client_received
                .iter()
                .any(|m| matches!(m, MessageRepr::Leave { player, .. } if *player == crashed))
        );
    }
}
