//! How the engine recognises Battlegrounds (`Recognition::FirstOfFlow`): a flow
//! is taken by its first AUTH and followed after that; a capture that begins
//! mid-session is only taken on a port the user names (`-d`), and its sessions
//! say so (`RecognisedBy::Port`). Through `proto::engine`, as the binary runs it.

use lwarscope::capture::{OwnedDatagram, Timestamp};
use lwarscope::engine::{Finding, Flow, Observer, PacketEvent, RecognisedBy, TrackerConfig};
use lwarscope::proto::battlegrounds::sim::{Config, Form, run};
use lwarscope::proto::battlegrounds::wire::{MoveOp, PacketRepr, PayloadRepr};
use lwarscope::proto::{self, DecodeAs};
use std::net::SocketAddr;

/// Every packet's protocol, and every finding.
#[derive(Default)]
struct Seen {
    packets: Vec<(u64, &'static str)>,
    findings: Vec<Finding>,
}

impl Observer for Seen {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.packets.push((e.datagram.frame, e.protocol.name));
        Flow::Continue
    }
    fn finding(&mut self, f: &Finding) {
        self.findings.push(*f);
    }
}

const SERVER_PORT: u16 = 7777;

fn decode_as_bg() -> DecodeAs {
    format!("udp.port=={SERVER_PORT},battlegrounds")
        .parse()
        .unwrap()
}

/// Feeds every datagram; how many the engine took.
fn feed(engine: &mut lwarscope::engine::Engine, ds: &[OwnedDatagram], seen: &mut Seen) -> usize {
    ds.iter()
        .filter(|d| engine.observe(&d.as_datagram(), seen).is_some())
        .count()
}

/// (recognised_by, state, client) of every session.
fn sessions(engine: &lwarscope::engine::Engine) -> Vec<(RecognisedBy, String, SocketAddr)> {
    let mut out = Vec::new();
    engine.for_each_session(|s| {
        assert_eq!(s.protocol.name, "bg");
        out.push((s.recognised_by, s.state.to_owned(), s.client))
    });
    out
}

fn is_auth(d: &OwnedDatagram) -> bool {
    proto::battlegrounds::wire::is_auth(&d.payload)
}

#[test]
fn a_flow_that_starts_with_auth_is_taken_whole() {
    let r = run(&Config {
        clients: 2,
        duration_ms: 1_500,
        // The first notes' form: these sessions end `established` (the
        // reference form closes them).
        form: Form::Little,
        ..Config::default()
    });
    // The simulator's flows start with AUTH, and carry every other type later.
    assert!(is_auth(&r.datagrams[0]));
    let later: Vec<_> = r.datagrams.iter().filter(|d| !is_auth(d)).collect();
    assert!(later.len() > 50);
    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Seen::default();
    assert_eq!(
        feed(&mut engine, &r.datagrams, &mut seen),
        r.datagrams.len()
    );
    assert!(seen.packets.iter().all(|(_, p)| *p == "bg"));
    assert_eq!(seen.packets.len(), r.datagrams.len());
    let summary = engine.finish(&mut seen);
    for t in [
        "AUTH",
        "AUTH_OK",
        "PING",
        "PONG",
        "MOVE_OP",
        "MOVE_EVENT",
        "MSG",
        "MSG_ACK",
    ] {
        assert!(
            summary.messages.get(t).copied().unwrap_or(0) > 0,
            "no {t} analysed: {:?}",
            summary.messages
        );
    }
    let s = sessions(&engine);
    assert_eq!(s.len(), 2);
    assert!(
        s.iter()
            .all(|(by, state, _)| *by == RecognisedBy::Probe && state == "established")
    );
    assert!(seen.findings.is_empty(), "{:?}", seen.findings);
    // A later datagram of another address pair is not the flow's.
    let mut stray = r.datagrams[5].clone();
    stray.src = "10.9.9.9:1234".parse().unwrap();
    assert!(!is_auth(&stray));
    assert!(engine.observe(&stray.as_datagram(), &mut seen).is_none());
}

/// The simulator's datagrams from the first that is not AUTH, AUTH_OK or the
/// first PING and PONG (the capture begins after every handshake).
fn midsession(clients: u16) -> Vec<OwnedDatagram> {
    let r = run(&Config {
        clients,
        duration_ms: 2_000,
        // The first notes' form: these sessions end `established` (the
        // reference form closes them).
        form: Form::Little,
        ..Config::default()
    });
    let start = r
        .datagrams
        .iter()
        .rposition(|d| d.payload.get(4..6) == Some(&[0, 1][..]))
        .expect("an AUTH_OK")
        + 1;
    let ds = r.datagrams[start..].to_vec();
    assert!(ds.len() > 100);
    assert!(ds.iter().all(|d| !is_auth(d)));
    ds
}

#[test]
fn a_capture_that_starts_mid_session_needs_the_port() {
    let ds = midsession(2);
    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Seen::default();
    assert_eq!(feed(&mut engine, &ds, &mut seen), 0);
    assert_eq!(engine.unrecognised().other, ds.len() as u64);
    assert_eq!(engine.session_count(), 0);

    let mut engine = proto::engine_with(TrackerConfig::default(), &[decode_as_bg()]);
    let mut seen = Seen::default();
    assert_eq!(feed(&mut engine, &ds, &mut seen), ds.len());
    engine.finish(&mut seen);
    let s = sessions(&engine);
    assert_eq!(s.len(), 2, "{s:?}");
    for (by, state, _) in &s {
        assert_eq!(*by, RecognisedBy::Port);
        assert_eq!(state, "midstream");
    }
    // No handshake rule applies to a session whose handshake was not captured
    // (its first packets are MOVE_OPs, PINGs and MSGs, not AUTH).
    for f in &seen.findings {
        let l = f.label().to_string();
        for rule in ["auth-first", "auth-repeat", "auth-ok-count", "before-ping"] {
            assert!(!l.ends_with(rule), "{l}");
        }
    }
}

#[test]
fn the_decode_as_names_battlegrounds_in_any_case_and_by_short_name() {
    for name in ["battlegrounds", "Battlegrounds", "BG", "bg"] {
        let d: DecodeAs = format!("udp.port==9000,{name}").parse().unwrap();
        assert_eq!(proto::REGISTRY[d.index].info.name, "bg", "{name}");
        assert_eq!(d.port, 9000);
    }
}

fn bytes(sid: u32, channel: u8, payload: PayloadRepr) -> Vec<u8> {
    PacketRepr::new(sid, channel, payload).to_bytes().unwrap()
}

fn dgram(frame: u64, src: SocketAddr, dst: SocketAddr, payload: Vec<u8>) -> OwnedDatagram {
    OwnedDatagram::new(frame, Timestamp::from_millis(frame * 10), src, dst, payload)
}

fn move_op(sid: u32, op_sig: u8) -> Vec<u8> {
    bytes(
        sid,
        1,
        PayloadRepr::MoveOp(MoveOp {
            op_sig,
            ..MoveOp::default()
        }),
    )
}

#[test]
fn a_foreign_session_id_in_a_port_recognised_flow_is_a_violation_per_incident() {
    let client: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let server: SocketAddr = format!("10.0.0.2:{SERVER_PORT}").parse().unwrap();
    // The flow's first session id is 7: two incidents of foreign ids (8 twice
    // in a row, then 9), each closed by a packet of 7.
    let sids = [7, 7, 8, 8, 7, 9, 7];
    let ds: Vec<_> = sids
        .iter()
        .enumerate()
        .map(|(i, &sid)| {
            let p = if i % 2 == 0 {
                bytes(sid, 0, PayloadRepr::Ping)
            } else {
                move_op(sid, i as u8)
            };
            dgram(i as u64 + 1, client, server, p)
        })
        .collect();
    let mut engine = proto::engine_with(TrackerConfig::default(), &[decode_as_bg()]);
    let mut seen = Seen::default();
    assert_eq!(feed(&mut engine, &ds, &mut seen), ds.len());
    engine.finish(&mut seen);
    let changed: Vec<u64> = seen
        .findings
        .iter()
        .filter(|f| f.label().to_string() == "violation/session-id-changed")
        .map(|f| f.frame)
        .collect();
    assert_eq!(changed, [3, 6], "{:?}", seen.findings);
    let s = sessions(&engine);
    assert_eq!(
        s.len(),
        1,
        "one session: a foreign id does not start another"
    );
    assert_eq!(s[0].0, RecognisedBy::Port);
}

#[test]
fn several_clients_behind_one_ip_are_separate_sessions() {
    let r = run(&Config {
        clients: 4,
        duration_ms: 1_000,
        // The first notes' form: these sessions end `established` (the
        // reference form closes them).
        form: Form::Little,
        ..Config::default()
    });
    let mut clients: Vec<SocketAddr> = r
        .datagrams
        .iter()
        .filter(|d| d.dst.port() == SERVER_PORT)
        .map(|d| d.src)
        .collect();
    clients.sort();
    clients.dedup();
    assert_eq!(clients.len(), 4);
    assert!(
        clients.iter().all(|c| c.ip() == clients[0].ip()),
        "{clients:?}"
    );

    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Seen::default();
    assert_eq!(
        feed(&mut engine, &r.datagrams, &mut seen),
        r.datagrams.len()
    );
    engine.finish(&mut seen);
    let mut got: Vec<SocketAddr> = sessions(&engine).iter().map(|s| s.2).collect();
    got.sort();
    assert_eq!(got, clients);
    assert!(seen.findings.is_empty(), "{:?}", seen.findings);
    // Each session counts only its own client's packets.
    let mut per_client = std::collections::BTreeMap::new();
    for d in &r.datagrams {
        let c = if d.dst.port() == SERVER_PORT {
            d.src
        } else {
            d.dst
        };
        *per_client.entry(c).or_insert(0u64) += 1;
    }
    engine.for_each_session(|s| {
        assert_eq!(s.c2s.packets + s.s2c.packets, per_client[&s.client]);
    });

    // Begun mid-session and taken by the port: still one session per client.
    let ds = midsession(3);
    let mut engine = proto::engine_with(TrackerConfig::default(), &[decode_as_bg()]);
    feed(&mut engine, &ds, &mut Seen::default());
    assert_eq!(sessions(&engine).len(), 3);
}

#[test]
fn a_datagram_of_a_followed_flow_is_taken_even_when_it_does_not_decode() {
    let client: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let server: SocketAddr = "10.0.0.2:5555".parse().unwrap();
    let ds = [
        dgram(1, client, server, bytes(3, 0, PayloadRepr::Auth)),
        dgram(2, server, client, b"garbage".to_vec()),
        dgram(3, client, server, move_op(3, 1)),
    ];
    let mut engine = proto::engine(TrackerConfig::default());
    let mut seen = Seen::default();
    assert_eq!(feed(&mut engine, &ds, &mut seen), 3);
    let labels: Vec<String> = seen
        .findings
        .iter()
        .map(|f| f.label().to_string())
        .collect();
    assert!(labels.contains(&"malformed".to_owned()), "{labels:?}");
    assert_eq!(sessions(&engine).len(), 1);
}

/// The binary on `captures/bg-midsession.pcap` (begun after every handshake;
/// the server is on port 7777): nothing without `-d`, two sessions "(by
/// port)" with it.
#[test]
fn the_binary_takes_a_mid_session_capture_only_on_the_named_port() {
    use assert_cmd::Command;
    let pcap = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/bg-midsession.pcap");
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["-r", pcap])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("Battlegrounds packets"), "{text}");
    assert!(!text.contains("by port"), "{text}");
    assert!(text.contains("No sessions"), "{text}");
    let skipped = text
        .lines()
        .find(|l| l.contains("other traffic (skipped)"))
        .unwrap();
    assert!(skipped.contains(" 224 "), "{skipped}");

    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["-r", pcap, "-d", "udp.port==7777,battlegrounds"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let bg = text
        .lines()
        .find(|l| l.contains("Battlegrounds packets"))
        .unwrap();
    assert!(bg.contains(" 224 "), "{bg}");
    assert_eq!(text.matches("by port").count(), 2, "{text}");
    assert_eq!(text.matches("midstream").count(), 2, "{text}");
    assert!(text.contains("No findings."), "{text}");
}

/// The guess made away from the engine (the reader thread's, for rendering
/// ahead) follows a flow from its AUTH on, as the engine does, and names no
/// protocol for a flow it never saw begin.
#[test]
fn the_guess_follows_a_flow_from_its_auth() {
    let r = run(&Config {
        clients: 2,
        duration_ms: 1_500,
        // The first notes' form: these sessions end `established` (the
        // reference form closes them).
        form: Form::Little,
        ..Config::default()
    });
    let engine = proto::engine(TrackerConfig::default());
    let mut guess = engine.guess();
    let named: Vec<_> = r
        .datagrams
        .iter()
        .map(|d| guess.protocol(&d.as_datagram()).map(|p| p.name))
        .collect();
    assert!(named.iter().all(|p| *p == Some("bg")), "{named:?}");
    // A new guess, mid-session: nothing names those flows.
    let mut fresh = engine.guess();
    let mid = midsession(2);
    assert!(
        mid.iter()
            .all(|d| fresh.protocol(&d.as_datagram()).is_none())
    );
}
