//! The Starstrike simulator and its corpus (`captures/strs-*.pcap`): each capture
//! regenerates byte for byte from its configuration here, its committed
//! `*.truth.json` is the simulator's, and the analyzer reports exactly the
//! truth's findings, session by session.
//!
//! To rewrite the corpus after a deliberate change:
//! `STRS_WRITE_CORPUS=1 cargo test --test starstrike sim::write_corpus -- --ignored`.

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
        (
            "strs-reorder",
            SimConfig {
                seed: 11,
                clients: 2,
                reorder: [0.08, 0.08],
                ..SimConfig::default()
            },
        ),
        (
            "strs-dup",
            SimConfig {
                seed: 12,
                clients: 2,
                duplicate: 0.1,
                duplicate_s2c: Some(0.04),
                ..SimConfig::default()
            },
        ),
        (
            "strs-corrupt",
            SimConfig {
                seed: 13,
                clients: 2,
                corrupt: [0.06, 0.06],
                chat_every: 5,
                ..SimConfig::default()
            },
        ),
        (
            "strs-retransmit-limit",
            SimConfig {
                seed: 14,
                clients: 2,
                duration_ms: 8_000,
                link_dies_ms: Some(2_600),
                max_sends: Some(8),
                // No server events: the server hears nothing and gives the
                // client up after the notes' 10 s timeout, silently.
                event_every: 0,
                ..SimConfig::default()
            },
        ),
        (
            "strs-tapmiss",
            SimConfig {
                seed: 15,
                clients: 2,
                tap_miss: [0.05, 0.05],
                ..SimConfig::default()
            },
        ),
    ]
}

/// The Starstrike half of `captures/mixed-lwar-strs.pcap`, merged with the
/// lwar capture `captures/sim-clean.pcap`.
fn mixed_strs() -> SimConfig {
    SimConfig {
        seed: 16,
        clients: 2,
        loss: 0.03,
        ..SimConfig::default()
    }
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
    mixed: bool,
) -> (
    BTreeMap<String, BTreeMap<String, u64>>,
    BTreeMap<String, String>,
) {
    let mut source = Source::files(&[pcap]).unwrap();
    // No port decoded as Starstrike: a datagram whose magic the network
    // damaged is still its session's (a malformed packet), by its flow.
    let mut engine = proto::engine(Default::default());
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
        // Another protocol only in the mixed capture.
        assert!(s.protocol.name == "strs" || mixed, "{}", s.protocol.name);
        if s.protocol.name == "strs" {
            by_client.insert(s.client.to_string(), BTreeMap::new());
            states.insert(s.client.to_string(), s.state.to_owned());
        }
    });
    for f in &seen.0 {
        let session = engine.session(f.session).unwrap();
        if session.protocol.name != "strs" {
            continue;
        }
        let client = session.client.to_string();
        *by_client
            .get_mut(&client)
            .unwrap()
            .entry(f.label().to_string())
            .or_default() += f.numbers();
    }
    (by_client, states)
}

fn check_against_truth(stem: &str, pcap: &Path, truth: &Truth) {
    let (found, states) = analyse(pcap, stem == "mixed");
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
    let reorder = truth("strs-reorder");
    assert!(reorder.findings["reordered"] > 0);
    let dup = truth("strs-dup");
    assert!(dup.findings["duplicate-packet"] > 0);
    let corrupt = truth("strs-corrupt");
    for k in [
        "malformed",
        "violation/invalid-enum",
        "violation/non-finite-float",
        "violation/input-range",
        "violation/string-padding",
    ] {
        assert!(corrupt.findings[k] > 0, "strs-corrupt has no {k}");
    }
    // Every way to be malformed, by the analyzer's reasons.
    let (summary, _) = summarise(Path::new("captures/strs-corrupt.pcap"));
    for reason in [
        "short-header",
        "wrong-magic",
        "unknown-type",
        "truncated-payload",
        "trailing-bytes",
    ] {
        assert!(
            summary.malformed.get(reason).copied().unwrap_or(0) > 0,
            "strs-corrupt has no {reason}: {:?}",
            summary.malformed
        );
    }
    let limit = truth("strs-retransmit-limit");
    let dead = &limit.sessions[0];
    for k in ["retransmit-limit", "never-acked", "disconnect-sent"] {
        assert!(dead.findings[k] > 0, "the dead link has no {k}");
    }
    assert_eq!(limit.sessions[1].findings["retransmit-limit"], 0);
    // The dead client gives up with Disconnect (Timeout), as the notes say.
    let reasons = disconnect_reasons(Path::new("captures/strs-retransmit-limit.pcap"));
    assert!(
        reasons.contains(&(dead.client.clone(), "reason Timeout (2)".to_owned())),
        "{reasons:?}"
    );
    let tapmiss = truth("strs-tapmiss");
    assert!(tapmiss.findings["not-captured"] > 0);
    // Delivered, only missed by the tap: never `lost`.
    assert_eq!(tapmiss.findings["lost"], 0);
    assert_eq!(reorder.findings["lost"], 0);
    assert!(tapmiss.findings["ack-unseen"] > 0);
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

/// Issue 30: a copy of a reliable message captured after the peer's ack of
/// an earlier copy is `spurious-retransmission` only when the ack was
/// captured at least the round trip between the tap and the sender before
/// it (the smoothed ack delay the capture measures); sooner, it may have
/// crossed the ack in flight: a `repeat` note. The simulator's truth judges
/// by the same rule from what it knows; the analyzer agrees on runs that
/// show both (a dead uplink: acks captured and never delivered, so the
/// server copies what the capture saw acked long before; the server
/// answering each copy of the client's Disconnect soon after its ack).
#[test]
fn copies_after_an_ack_are_spurious_only_past_the_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (mut spurious, mut repeats) = (0, 0);
    for seed in 40..52 {
        for (latency_ms, link_dies_ms) in [(4, Some(2_000)), (20, None)] {
            let config = SimConfig {
                seed,
                clients: 2,
                duration_ms: 3_000,
                latency_ms,
                loss: 0.1,
                link_dies_ms,
                ..SimConfig::default()
            };
            let sim = simulate(&config).unwrap();
            let path = dir.path().join(format!("{seed}-{latency_ms}.pcap"));
            write_pcap(&sim, &path).unwrap();
            check_against_truth(
                &format!("seed {seed} latency {latency_ms}"),
                &path,
                &sim.truth,
            );
            spurious += sim.truth.findings["spurious-retransmission"];
            repeats += sim.truth.findings["repeat"];
        }
    }
    assert!(
        spurious > 0 && repeats > 0,
        "{spurious} spurious, {repeats} repeats"
    );
}

/// Issue 30: half the datagrams missed by the tap, nothing else wrong
/// (`lwarscope sim --proto starstrike --seed 108 -c 6 --tap-miss 50% -d 10`,
/// peers that keep the notes' retransmission limit): the tap missed 21
/// server packets in a row to one client, and the packet after them, 1.1 s
/// later, raised `heartbeat-missing` though its number showed the packets
/// in between were sent. Now nothing above a note, and the analyzer
/// matches the truth.
#[test]
fn half_the_datagrams_missed_by_the_tap_give_no_warning() {
    use lwarscope::engine::Severity;
    let dir = tempfile::tempdir().unwrap();
    let config = SimConfig {
        seed: 108,
        clients: 6,
        duration_ms: 10_000,
        tap_miss: [0.5, 0.5],
        max_sends: Some(6),
        ..SimConfig::default()
    };
    let sim = simulate(&config).unwrap();
    let path = dir.path().join("tapmiss50.pcap");
    write_pcap(&sim, &path).unwrap();
    check_against_truth("seed 108 (tap-miss 50 %)", &path, &sim.truth);
    let mut source = Source::files(&[&path]).unwrap();
    let mut engine = proto::engine(Default::default());
    let mut seen = Collect::default();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut seen);
        }
    }
    engine.finish(&mut seen);
    let loud: Vec<String> = seen
        .0
        .iter()
        .filter(|f| f.severity() > Severity::Note)
        .map(|f| format!("{} frame {} {}", f.label(), f.frame, f.detail))
        .collect();
    assert_eq!(loud, Vec::<String>::new());
}

/// The sweep of the tap-miss work (issue: findings that claim more than the
/// capture proves): seeds 1 to 6, 6 s, the tap missing 40 % of one
/// direction or 25 % of both, every datagram delivered: nothing above a
/// note, and the analyzer equals the truth.
#[test]
fn tap_misses_one_way_or_both_give_no_warning_over_seeds() {
    use lwarscope::engine::Severity;
    let dir = tempfile::tempdir().unwrap();
    let mut loud = Vec::new();
    for tap_miss in [[0.0, 0.4], [0.4, 0.0], [0.25, 0.25]] {
        for seed in 1..=6 {
            let config = SimConfig {
                seed,
                clients: 2,
                duration_ms: 6_000,
                tap_miss,
                ..SimConfig::default()
            };
            let sim = simulate(&config).unwrap();
            let path = dir.path().join("sweep.pcap");
            write_pcap(&sim, &path).unwrap();
            let case = format!("seed {seed}, tap-miss {tap_miss:?}");
            check_against_truth(&case, &path, &sim.truth);
            let mut source = Source::files(&[&path]).unwrap();
            let mut engine = proto::engine(Default::default());
            let mut seen = Collect::default();
            while let Some(frame) = source.next_frame().unwrap() {
                if let FrameClass::Udp(d) = frame.class {
                    engine.observe(&d, &mut seen);
                }
            }
            engine.finish(&mut seen);
            loud.extend(
                seen.0
                    .iter()
                    .filter(|f| f.severity() > Severity::Note)
                    .map(|f| format!("{case}: {} frame {}", f.label(), f.frame)),
            );
        }
    }
    assert_eq!(loud, Vec::<String>::new());
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
    write_mixed_to(Path::new(MIXED), Path::new(MIXED_TRUTH));
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
    let d = Datagram::new(1, Timestamp(1), lwar_client, lwar_server, &lwar);
    assert!(engine.observe(&d, &mut ()).is_some());
    for (i, f) in sim.frames.iter().enumerate() {
        let d = Datagram::new(
            i as u64 + 2,
            Timestamp(2 + f.ts_us * 1_000),
            f.src,
            f.dst,
            &f.payload,
        );
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

/// The engine's summary of a capture (the server's port decoded as
/// Starstrike) and its session protocols.
fn summarise(pcap: &Path) -> (lwarscope::engine::Summary, Vec<&'static str>) {
    let mut source = Source::files(&[pcap]).unwrap();
    let strs: proto::DecodeAs = "udp.port==7777,strs".parse().unwrap();
    let mut engine = proto::engine_with(Default::default(), &[strs]);
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut ());
        }
    }
    let summary = engine.finish(&mut ());
    let mut protocols = Vec::new();
    engine.for_each_session(|s| protocols.push(s.protocol.name));
    (summary, protocols)
}

const MIXED: &str = "captures/mixed-lwar-strs.pcap";
const MIXED_TRUTH: &str = "captures/mixed-lwar-strs.truth.json";

/// Writes the mixed capture and its truth: the lwar truth and the Starstrike
/// truth side by side.
fn write_mixed_to(pcap: &Path, truth_path: &Path) {
    let sim = simulate(&mixed_strs()).unwrap();
    proto::starstrike::sim::write_mixed(&sim, Path::new("captures/sim-clean.pcap"), pcap).unwrap();
    let lwar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("captures/sim-clean.truth.json").unwrap())
            .unwrap();
    let doc = serde_json::json!({ "lwar": lwar, "strs": sim.truth });
    let mut json = serde_json::to_string_pretty(&doc).unwrap();
    json.push('\n');
    std::fs::write(truth_path, json).unwrap();
}

#[test]
fn the_mixed_capture_gives_each_protocol_its_truth() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, truth_path) = (dir.path().join("m.pcap"), dir.path().join("m.json"));
    write_mixed_to(&pcap, &truth_path);
    assert!(std::fs::read(&pcap).unwrap() == std::fs::read(MIXED).unwrap());
    assert_eq!(
        std::fs::read_to_string(&truth_path).unwrap(),
        std::fs::read_to_string(MIXED_TRUTH).unwrap()
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(MIXED_TRUTH).unwrap()).unwrap();
    let strs: Truth = serde_json::from_value(doc["strs"].clone()).unwrap();
    let lwar: lwarscope::engine::Summary =
        serde_json::from_value(doc["lwar"]["summary"].clone()).unwrap();
    // Starstrike's sessions: exactly its truth, finding by finding.
    check_against_truth("mixed", Path::new(MIXED), &strs);
    // lwar's sessions: exactly its summary (the loss estimate is an estimate,
    // as in tests/lwar/corpus.rs).
    let (mut summary, protocols) = summarise(Path::new(MIXED));
    let n = lwar.sessions.len();
    assert_eq!(protocols.len(), n + strs.sessions.len());
    assert_eq!(protocols.iter().filter(|p| **p == "lwar").count(), n);
    for s in &mut summary.sessions {
        s.c2s.loss = None;
        s.s2c.loss = None;
    }
    let lwar_clients: Vec<&str> = lwar.sessions.iter().map(|s| s.client.as_str()).collect();
    let lwar_sessions: Vec<_> = summary
        .sessions
        .iter()
        .filter(|s| lwar_clients.contains(&s.client.as_str()))
        .cloned()
        .collect();
    assert_eq!(lwar_sessions, lwar.sessions);
    // Totals: lwar's and Starstrike's side by side.
    for (kind, n) in &lwar.findings {
        let strs_n = strs.findings.get(kind).copied().unwrap_or(0);
        assert_eq!(
            summary.findings.get(kind).copied().unwrap_or(0),
            n + strs_n,
            "{kind}"
        );
    }
    assert!(std::fs::metadata(MIXED).unwrap().len() < 200_000);
}

#[test]
fn check_gives_the_mixed_capture_one_verdict() {
    let out = assert_cmd::Command::cargo_bin("lwarscope")
        .unwrap()
        .args(["check", MIXED, "--deny", "malformed"])
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(lines[0].contains("mixed-lwar-strs.pcap"), "{stdout}");
    // Neither half is malformed: it passes.
    assert_eq!(code, Some(0), "{stdout}");
    assert!(lines[0].starts_with("PASS"), "{stdout}");
}

#[test]
fn sim_request_writes_the_capture_and_its_truth() {
    use lwarscope::proto::sim::{Rates, SimRequest};
    let dir = tempfile::tempdir().unwrap();
    let rates = |c2s, s2c| Rates { c2s, s2c };
    let req = SimRequest {
        write: dir.path().join("run.pcap"),
        truth: true,
        seed: 21,
        clients: 2,
        duration_ms: 3_000,
        loss: rates(0.05, 0.02),
        duplicate: rates(0.03, 0.03),
        reorder: rates(0.05, 0.05),
        corrupt: rates(0.04, 0.02),
        tap_miss: rates(0.02, 0.04),
        byte_order: None,
    };
    let protocol = proto::by_name("starstrike").unwrap();
    let sim = protocol.sim.expect("Starstrike has a simulator");
    let outcome = sim(&req).unwrap();
    let truth_path = dir.path().join("run.truth.json");
    assert_eq!(outcome.truth.as_deref(), Some(truth_path.as_path()));
    assert_eq!(outcome.sessions, 2);
    let truth: Truth =
        serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
    assert_eq!(truth.config.loss_s2c, Some(0.02));
    assert_eq!(truth.config.duplicate_s2c, None);
    assert_eq!(truth.config.max_sends, Some(6));
    check_against_truth("sim_request", &req.write, &truth);
    let frames = {
        let mut source = Source::files(&[&req.write]).unwrap();
        let mut n = 0;
        while source.next_frame().unwrap().is_some() {
            n += 1;
        }
        n
    };
    assert_eq!(outcome.frames, frames);
    // The same request, without truth: the same bytes, no truth file.
    let again = SimRequest {
        write: dir.path().join("again.pcap"),
        truth: false,
        ..req.clone()
    };
    assert_eq!(sim(&again).unwrap().truth, None);
    assert!(!dir.path().join("again.truth.json").exists());
    assert!(std::fs::read(&again.write).unwrap() == std::fs::read(&req.write).unwrap());
    // What the simulator cannot do is refused, not written.
    let bad = SimRequest {
        clients: 0,
        write: dir.path().join("bad.pcap"),
        ..req.clone()
    };
    assert!(sim(&bad).is_err());
    let bad = SimRequest {
        corrupt: rates(1.5, 0.0),
        write: dir.path().join("bad.pcap"),
        ..req
    };
    assert!(sim(&bad).unwrap_err().contains("probabilities"));
}

/// The (sender, detail) of every `disconnect-sent` in a capture.
fn disconnect_reasons(pcap: &Path) -> Vec<(String, String)> {
    let mut source = Source::files(&[pcap]).unwrap();
    let mut engine = proto::engine(Default::default());
    let mut seen = Collect::default();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut seen);
        }
    }
    engine.finish(&mut seen);
    seen.0
        .iter()
        .filter(|f| f.label().to_string() == "disconnect-sent")
        .map(|f| {
            let s = engine.session(f.session).unwrap();
            let sender = if f.direction.name() == "c2s" {
                s.client
            } else {
                s.server
            };
            (sender.to_string(), f.detail.to_string())
        })
        .collect()
}

/// Issue 30: a capture whose only fault is packets the tap missed gives no
/// warning and no error. Every seed, tap misses only (each direction, up to
/// 15 %), several clients, the two sides numbered 1 or 20 apart (within
/// reach of each other's ack window): what the capture cannot tell is a note,
/// never loss, a violation, a warning or an error.
#[test]
fn tap_misses_alone_give_no_warning_and_no_error() {
    use lwarscope::engine::Severity;
    let dir = tempfile::tempdir().unwrap();
    let mut notes: BTreeMap<String, u64> = BTreeMap::new();
    let mut loud: Vec<String> = Vec::new();
    for seed in 200..240u64 {
        let rate = 0.03 + 0.03 * (seed % 5) as f64;
        let config = SimConfig {
            seed,
            clients: 3,
            duration_ms: 4_000,
            chat_every: 5,
            tap_miss: [rate, rate / 2.0 + 0.02],
            server_offset: if seed % 4 == 0 { 20 } else { 1 },
            ..SimConfig::default()
        };
        let sim = simulate(&config).unwrap();
        let path = dir.path().join(format!("{seed}.pcap"));
        write_pcap(&sim, &path).unwrap();
        check_against_truth(&format!("seed {seed} (tap-miss)"), &path, &sim.truth);
        let mut source = Source::files(&[&path]).unwrap();
        let mut engine = proto::engine(Default::default());
        let mut seen = Collect::default();
        while let Some(frame) = source.next_frame().unwrap() {
            if let FrameClass::Udp(d) = frame.class {
                engine.observe(&d, &mut seen);
            }
        }
        engine.finish(&mut seen);
        loud.extend(
            seen.0
                .iter()
                .filter(|f| f.severity() > Severity::Note)
                .map(|f| format!("seed {seed}: {} frame {} {}", f.label(), f.frame, f.detail)),
        );
        for f in &seen.0 {
            *notes.entry(f.label().to_string()).or_default() += 1;
        }
    }
    assert!(loud.is_empty(), "{loud:#?}");
    // The runs show what the capture cannot tell, as notes.
    assert!(
        notes.get("not-captured").copied().unwrap_or(0) > 0,
        "{notes:?}"
    );
    assert!(
        notes.get("ack-unseen").copied().unwrap_or(0) > 0,
        "{notes:?}"
    );
}

/// Issue 30: at 300 ms of latency and 33 ms ticks, a tap missing half the
/// datagrams raised `lost` for numbers it had missed: the peer's windows that
/// reached them were sent while they were in flight (seeds 3 and 5, among
/// others), and the session ended before a later window could acknowledge
/// them. A window shows a number had not arrived only when sent after it
/// could have (rule 5): these are unconfirmed `not-captured` notes now.
#[test]
fn tap_misses_at_a_long_latency_give_no_warning() {
    use lwarscope::engine::Severity;
    let dir = tempfile::tempdir().unwrap();
    let mut loud: Vec<String> = Vec::new();
    for seed in 1..9u64 {
        let config = SimConfig {
            seed,
            clients: 3,
            duration_ms: 4_000,
            chat_every: 5,
            tick_ms: 33,
            latency_ms: 300,
            tap_miss: [0.5, 0.5],
            ..SimConfig::default()
        };
        let sim = simulate(&config).unwrap();
        let path = dir.path().join(format!("{seed}.pcap"));
        write_pcap(&sim, &path).unwrap();
        check_against_truth(&format!("seed {seed} (300 ms)"), &path, &sim.truth);
        let mut source = Source::files(&[&path]).unwrap();
        let mut engine = proto::engine(Default::default());
        let mut seen = Collect::default();
        while let Some(frame) = source.next_frame().unwrap() {
            if let FrameClass::Udp(d) = frame.class {
                engine.observe(&d, &mut seen);
            }
        }
        engine.finish(&mut seen);
        loud.extend(
            seen.0
                .iter()
                .filter(|f| f.severity() > Severity::Note)
                .map(|f| format!("seed {seed}: {} frame {} {}", f.label(), f.frame, f.detail)),
        );
    }
    assert!(loud.is_empty(), "{loud:#?}");
}

/// Issue 30: the lenient peers (no retransmission limit) give a message up
/// after 6 sends; a client that never connects (its uplink dead from 1 s)
/// then sends the same ConnectionRequest bytes again as a new message, 500 ms
/// after the last. The capture cannot tell that from a 7th send of the same
/// message: the truth counted 9 retransmissions where the analyzer counts 5
/// and one `retransmit-limit` (the notes allow 5). The truth follows the
/// capture now.
#[test]
fn the_same_request_sent_again_after_6_sends_is_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let config = SimConfig {
        seed: 41,
        clients: 2,
        duration_ms: 3_000,
        latency_ms: 4,
        loss: 0.1,
        link_dies_ms: Some(1_000),
        ..SimConfig::default()
    };
    let sim = simulate(&config).unwrap();
    let path = dir.path().join("41.pcap");
    write_pcap(&sim, &path).unwrap();
    let dead = &sim.truth.sessions[0].findings;
    assert_eq!(
        (dead["retransmission"], dead["retransmit-limit"]),
        (5, 1),
        "{dead:?}"
    );
    check_against_truth("seed 41 (a Request past the limit)", &path, &sim.truth);
}

/// Issue 30: a server that keeps sending reliable events (one every 20 ms
/// tick) to a client whose uplink died (its packets captured, never
/// delivered: the server hears no acknowledgement and resends every event 5
/// times, 500 ms apart): every copy is counted as its truth says, and nothing
/// is forgotten (the hand-built floods of tests/starstrike/findings.rs show
/// the bound itself).
#[test]
fn a_server_resending_to_a_deaf_link_keeps_every_copy_counted() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [31, 32, 33] {
        let config = SimConfig {
            seed,
            clients: 1,
            tick_ms: 20,
            event_every: 1,
            duration_ms: 5_000,
            link_dies_ms: Some(1_000),
            ..SimConfig::default()
        };
        let sim = simulate(&config).unwrap();
        let path = dir.path().join(format!("{seed}.pcap"));
        write_pcap(&sim, &path).unwrap();
        let t = &sim.truth.findings;
        let copies = t["retransmission"]
            + t["spurious-retransmission"]
            + t["repeat"]
            + t["retransmit-limit"];
        assert!(copies > 300, "seed {seed}: {t:?}");
        check_against_truth(&format!("seed {seed} (deaf link)"), &path, &sim.truth);
        let (found, _) = analyse(&path, false);
        assert!(
            found
                .values()
                .all(|f| !f.contains_key("reliable-forgotten")),
            "{found:?}"
        );
    }
}
