//! The Starstrike simulator and its corpus (`captures/strs-*.pcap`): each capture
//! regenerates byte for byte from its configuration here, its committed
//! `*.truth.json` is the simulator's, and the analyzer reports exactly the
//! truth's findings, session by session.
//!
//! To rewrite the corpus after a deliberate change:
//! `STRS_WRITE_CORPUS=1 cargo test --test starstrike_sim write_corpus -- --ignored`.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Finding, Observer};
use lwarscope::proto;
use lwarscope::proto::starstrike::sim::{SimConfig, Truth, run, simulate, write_pcap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The corpus: file stem and configuration.
fn corpus() -> Vec<(&'static str, SimConfig)> {
    vec![
        (
            "strs-clean",
            SimConfig {
                seed: 1,
                ..SimConfig::default()
            },
        ),
        (
            "strs-loss",
            SimConfig {
                seed: 7,
                clients: 3,
                loss: 0.08,
                duplicate: 0.03,
                ..SimConfig::default()
            },
        ),
        (
            "strs-wrap",
            SimConfig {
                seed: 3,
                first_seq: Some(65_480),
                ..SimConfig::default()
            },
        ),
        (
            "strs-drift",
            SimConfig {
                seed: 4,
                server_offset: 1000,
                duration_ms: 4_000,
                ..SimConfig::default()
            },
        ),
        (
            "strs-reject",
            SimConfig {
                seed: 5,
                clients: 2,
                reject: true,
                ..SimConfig::default()
            },
        ),
    ]
}

fn paths(stem: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new("captures");
    (
        dir.join(format!("{stem}.pcap")),
        dir.join(format!("{stem}.truth.json")),
    )
}

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// The analyzer's findings per client address, by label, and the states.
fn analyse(
    pcap: &Path,
) -> (
    BTreeMap<String, BTreeMap<String, u64>>,
    BTreeMap<String, String>,
) {
    let mut source = Source::files(&[pcap]).unwrap();
    // The server's port decoded as Starstrike: a datagram whose magic the
    // network damaged is still the session's (a malformed packet).
    let strs: proto::DecodeAs = "udp.port==7777,strs".parse().unwrap();
    let mut engine = proto::engine_with(Default::default(), &[strs]);
    let mut seen = Collect::default();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine
                .observe(&d, &mut seen)
                .expect("every frame is Starstrike");
        }
    }
    engine.finish(&mut seen);
    let mut by_client: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut states = BTreeMap::new();
    engine.for_each_session(|s| {
        assert_eq!(s.protocol.name, "strs");
        by_client.insert(s.client.to_string(), BTreeMap::new());
        states.insert(s.client.to_string(), s.state.to_owned());
    });
    for f in &seen.0 {
        let client = engine.session(f.session).unwrap().client.to_string();
        *by_client
            .get_mut(&client)
            .unwrap()
            .entry(f.label().to_string())
            .or_default() += 1;
    }
    (by_client, states)
}

fn check_against_truth(stem: &str, pcap: &Path, truth: &Truth) {
    let (found, states) = analyse(pcap);
    assert_eq!(found.len(), truth.sessions.len(), "{stem}: sessions");
    for s in &truth.sessions {
        let got = &found[&s.client];
        for (kind, &n) in &s.findings {
            assert_eq!(
                got.get(kind).copied().unwrap_or(0),
                n,
                "{stem} {}: {kind} (all: {got:?})",
                s.client
            );
        }
        for (kind, &n) in got {
            assert!(
                s.findings.contains_key(kind),
                "{stem} {}: {n} {kind} the truth does not model",
                s.client
            );
        }
        assert_eq!(states[&s.client], s.state, "{stem} {}: state", s.client);
    }
}

#[test]
fn the_corpus_regenerates_and_the_analyzer_reports_its_truth() {
    let dir = tempfile::tempdir().unwrap();
    for (stem, config) in corpus() {
        let (pcap, truth_path) = paths(stem);
        let out = dir.path().join(format!("{stem}.pcap"));
        let out_truth = dir.path().join(format!("{stem}.truth.json"));
        let truth = run(&config, &out, Some(&out_truth)).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&pcap).unwrap(),
            "{stem}.pcap differs from its regeneration"
        );
        let committed: Truth =
            serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
        assert_eq!(committed, truth, "{stem}.truth.json");
        check_against_truth(stem, &pcap, &truth);
    }
}

#[test]
fn the_corpus_shows_what_it_is_for() {
    let truth = |stem: &str| -> Truth {
        let (_, t) = paths(stem);
        serde_json::from_str(&std::fs::read_to_string(t).unwrap()).unwrap()
    };
    let clean = truth("strs-clean");
    assert!(
        clean
            .findings
            .iter()
            .all(|(k, &n)| n == 0 || k == "disconnect-sent")
    );
    assert_eq!(clean.findings["disconnect-sent"], 2);
    let loss = truth("strs-loss");
    for k in ["lost", "duplicate-packet", "retransmission"] {
        assert!(loss.findings[k] > 0, "strs-loss has no {k}");
    }
    let drift = truth("strs-drift");
    assert_eq!(drift.findings["ack-drift"], 1);
    assert!(drift.findings["never-acked"] > 0);
    assert!(drift.findings["retransmission"] >= 5);
    let reject = truth("strs-reject");
    assert_eq!(reject.findings["connection-rejected"], 2);
    let wrap = truth("strs-wrap");
    assert!(
        wrap.findings.values().all(|&n| n == 0 || n == 2),
        "{wrap:?}"
    );
}

#[test]
fn the_same_seed_gives_the_same_frames() {
    let config = SimConfig {
        seed: 99,
        clients: 2,
        loss: 0.05,
        duplicate: 0.05,
        duration_ms: 2_000,
        ..SimConfig::default()
    };
    let a = simulate(&config).unwrap();
    let b = simulate(&config).unwrap();
    assert_eq!(a.frames, b.frames);
    assert_eq!(a.truth, b.truth);
    let c = simulate(&SimConfig {
        seed: 100,
        ..config
    })
    .unwrap();
    assert_ne!(a.frames, c.frames);
}

#[test]
fn random_lossy_runs_match_their_truth() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 10..70 {
        let config = SimConfig {
            seed,
            clients: 2,
            loss: 0.05 * (seed % 5) as f64,
            duplicate: 0.05,
            duration_ms: 3_000,
            server_offset: if seed % 7 == 0 { 40 } else { 1 },
            first_seq: (seed % 3 == 0).then_some(65_500),
            ..SimConfig::default()
        };
        let sim = simulate(&config).unwrap();
        let path = dir.path().join(format!("{seed}.pcap"));
        write_pcap(&sim, &path).unwrap();
        check_against_truth(&format!("seed {seed}"), &path, &sim.truth);
    }
}

#[test]
#[ignore = "rewrites the corpus: run on purpose"]
fn write_corpus() {
    if std::env::var_os("STRS_WRITE_CORPUS").is_none() {
        return;
    }
    for (stem, config) in corpus() {
        let (pcap, truth) = paths(stem);
        run(&config, &pcap, Some(&truth)).unwrap();
    }
}

#[test]
fn lwar_and_starstrike_share_one_engine() {
    use lwarscope::capture::{Datagram, Timestamp};
    use lwarscope::proto::lwar::wire::{Header, MessageRepr, PacketRepr as LwarPacket};
    let lwar = LwarPacket {
        header: Header {
            ack: 0,
            timestamp: 0,
        },
        messages: vec![MessageRepr::Connect {
            seqno: 1,
            name: "alice".into(),
        }],
    }
    .to_bytes();
    let sim = simulate(&SimConfig {
        duration_ms: 500,
        ..SimConfig::default()
    })
    .unwrap();
    let mut engine = proto::engine(Default::default());
    let lwar_client: std::net::SocketAddr = "10.9.9.9:5000".parse().unwrap();
    let lwar_server: std::net::SocketAddr = "10.9.9.1:32422".parse().unwrap();
    let d = Datagram {
        frame: 1,
        ts: Timestamp(1),
        src: lwar_client,
        dst: lwar_server,
        payload: &lwar,
        payload_len: lwar.len(),
    };
    assert!(engine.observe(&d, &mut ()).is_some());
    for (i, f) in sim.frames.iter().enumerate() {
        let d = Datagram {
            frame: i as u64 + 2,
            ts: Timestamp(2 + f.ts_us * 1_000),
            src: f.src,
            dst: f.dst,
            payload: &f.payload,
            payload_len: f.payload.len(),
        };
        assert!(engine.observe(&d, &mut ()).is_some());
    }
    let summary = engine.finish(&mut ());
    let mut protocols = Vec::new();
    engine.for_each_session(|s| protocols.push((s.protocol.name, s.client.to_string())));
    assert_eq!(
        protocols,
        [
            ("lwar", lwar_client.to_string()),
            ("strs", sim.truth.sessions[0].client.clone())
        ]
    );
    assert_eq!(summary.sessions.len(), 2);
    assert_eq!(summary.sessions[1].state, "disconnected");
}

/// Puts a fault, at a rate, into a configuration.
type Fault = fn(&mut SimConfig, f64);

/// One fault at a time, then all together, per direction: every run gives the
/// analyzer exactly its truth.
#[test]
fn faulty_runs_match_their_truth() {
    let dir = tempfile::tempdir().unwrap();
    let faults: [(&str, Fault); 6] = [
        ("reorder", |c, r| c.reorder = [r, r / 2.0]),
        ("corrupt", |c, r| c.corrupt = [r, r]),
        ("tap-miss", |c, r| c.tap_miss = [r / 2.0, r]),
        ("dup", |c, r| c.duplicate_s2c = Some(r)),
        ("loss", |c, r| c.loss_s2c = Some(r)),
        ("link", |c, _| {
            c.link_dies_ms = Some(1_500);
            c.max_sends = Some(if c.seed % 2 == 0 { 6 } else { 8 });
        }),
    ];
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for seed in 100..172u64 {
        let mut config = SimConfig {
            seed,
            clients: 2,
            duration_ms: 3_000,
            chat_every: 7,
            ..SimConfig::default()
        };
        let rate = 0.04 + 0.02 * (seed % 4) as f64;
        let (name, fault) = faults[seed as usize % faults.len()];
        fault(&mut config, rate);
        if seed % 36 >= 30 {
            for (_, fault) in &faults[..6] {
                fault(&mut config, rate);
            }
        }
        let sim = simulate(&config).unwrap();
        let path = dir.path().join(format!("{seed}.pcap"));
        write_pcap(&sim, &path).unwrap();
        check_against_truth(&format!("seed {seed} ({name})"), &path, &sim.truth);
        for (k, n) in &sim.truth.findings {
            *seen.entry(k.clone()).or_default() += n;
        }
    }
    // The runs exercise what they are for.
    for k in [
        "reordered",
        "not-captured",
        "lost",
        "ack-unseen",
        "malformed",
        "violation/invalid-enum",
        "violation/non-finite-float",
        "violation/input-range",
        "violation/string-padding",
        "retransmit-limit",
        "never-acked",
        "duplicate-packet",
    ] {
        assert!(seen.get(k).copied().unwrap_or(0) > 0, "no {k}: {seen:?}");
    }
}
