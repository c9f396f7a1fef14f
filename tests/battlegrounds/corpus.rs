//! The Battlegrounds corpus (`captures/bg-*.pcap` and their `.truth.json`):
//! each file regenerates byte for byte from its settings here, the analyzer
//! reports exactly the ground truth the simulator wrote beside it, and each file
//! shows what it is for. Rewrite the corpus on purpose with
//! `BG_WRITE_CORPUS=1 cargo test --test battlegrounds corpus:: -- --ignored`.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Finding, Observer, RecognisedBy, TrackerConfig};
use lwarscope::proto::battlegrounds::sim::{Config, Faults, Form, run, write};
use lwarscope::proto::{self, DecodeAs};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every capture of the corpus: the little-endian ones of the first notes
/// (`Form::Little`, unchanged since), then the reference implementation's
/// form (`bg-be-*`, big-endian, the simulator's default).
fn corpus() -> Vec<(&'static str, Config)> {
    let mut all = little();
    all.extend(reference());
    all
}

fn reference() -> Vec<(&'static str, Config)> {
    let base = Config {
        clients: 2,
        duration_ms: 3_000,
        one_ip: false,
        form: Form::Reference,
        ..Config::default()
    };
    vec![
        ("bg-be-clean", Config { seed: 11, ..base }),
        (
            "bg-be-loss",
            Config {
                seed: 12,
                faults: Faults {
                    loss_before_tap: 0.05,
                    loss_after_tap: 0.03,
                    duplicate: 0.0,
                },
                faults_s2c: Some(Faults {
                    loss_before_tap: 0.08,
                    loss_after_tap: 0.03,
                    duplicate: 0.0,
                }),
                ..base
            },
        ),
        (
            "bg-be-reorder",
            Config {
                seed: 13,
                reorder: [0.1, 0.1],
                ..base
            },
        ),
        (
            "bg-be-dup",
            Config {
                seed: 14,
                faults: Faults {
                    duplicate: 0.05,
                    ..Faults::default()
                },
                ..base
            },
        ),
        (
            "bg-be-corrupt",
            Config {
                seed: 16,
                duration_ms: 4_000,
                corrupt: [0.05, 0.12],
                ..base
            },
        ),
        (
            "bg-be-bigmsg",
            Config {
                seed: 16,
                clients: 1,
                duration_ms: 2_000,
                block: 200,
                render: (3_000, 12_000),
                ..base
            },
        ),
        (
            "bg-be-server-stops",
            Config {
                seed: 17,
                duration_ms: 8_000,
                server_stops_ms: Some(1_500),
                ..base
            },
        ),
        (
            "bg-be-auth-unanswered",
            Config {
                seed: 18,
                duration_ms: 1_000,
                server_stops_ms: Some(0),
                ..base
            },
        ),
    ]
}

fn little() -> Vec<(&'static str, Config)> {
    let base = Config {
        clients: 2,
        duration_ms: 3_000,
        one_ip: false,
        form: Form::Little,
        ..Config::default()
    };
    vec![
        ("bg-clean", Config { seed: 1, ..base }),
        (
            "bg-loss",
            Config {
                seed: 2,
                faults: Faults {
                    loss_before_tap: 0.05,
                    loss_after_tap: 0.03,
                    duplicate: 0.0,
                },
                faults_s2c: Some(Faults {
                    loss_before_tap: 0.08,
                    loss_after_tap: 0.03,
                    duplicate: 0.0,
                }),
                ..base
            },
        ),
        (
            "bg-reorder",
            Config {
                seed: 3,
                reorder: [0.1, 0.1],
                ..base
            },
        ),
        (
            "bg-dup",
            Config {
                seed: 4,
                faults: Faults {
                    duplicate: 0.05,
                    ..Faults::default()
                },
                ..base
            },
        ),
        (
            "bg-corrupt",
            Config {
                seed: 6,
                duration_ms: 4_000,
                corrupt: [0.05, 0.12],
                ..base
            },
        ),
        (
            "bg-bigmsg",
            Config {
                seed: 6,
                clients: 1,
                duration_ms: 2_000,
                block: 200,
                render: (3_000, 12_000),
                ..base
            },
        ),
        (
            "bg-midsession",
            Config {
                seed: 7,
                capture_from_ms: 1_500,
                ..base
            },
        ),
        (
            "bg-opsig-wrap",
            Config {
                seed: 8,
                clients: 1,
                duration_ms: 4_000,
                sig_start: 200,
                ..base
            },
        ),
        (
            "bg-oneip",
            Config {
                seed: 9,
                clients: 4,
                duration_ms: 2_000,
                one_ip: true,
                ..base
            },
        ),
    ]
}

fn paths(stem: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    (
        dir.join(format!("{stem}.pcap")),
        dir.join(format!("{stem}.truth.json")),
    )
}

fn truth(stem: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(paths(stem).1).unwrap()).unwrap()
}

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// Runs the capture through the engine as the binary does (with the truth's
/// `-d`, if any) and checks it against the truth.
fn check(stem: &str, pcap: &Path, t: &Value) {
    let decode_as: Vec<DecodeAs> = t["decode_as"]
        .as_str()
        .map(|d| vec![d.parse().unwrap()])
        .unwrap_or_default();
    let mut engine = proto::engine_with(TrackerConfig::default(), &decode_as);
    let mut seen = Collect::default();
    let mut source = Source::files(&[pcap]).unwrap();
    let mut frames = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            frames += 1;
            assert!(
                engine.observe(&d, &mut seen).is_some(),
                "{stem}: frame {} not recognised",
                d.frame
            );
        }
    }
    assert_eq!(frames, t["frames"].as_u64().unwrap(), "{stem}: frames");
    let summary = engine.finish(&mut seen);
    let mut found = BTreeMap::new();
    for f in &seen.0 {
        *found
            .entry(format!("{} {}", f.direction.name(), f.label()))
            .or_insert(0u64) += 1;
    }
    let mut expected = BTreeMap::new();
    let mut malformed = BTreeMap::new();
    for dir in ["c2s", "s2c"] {
        for kind in [
            "duplicate-packet",
            "resend",
            "sig-gap",
            "sig-regression",
            "violation/auth-repeat",
            "auth-unanswered",
            "ping-unanswered",
            "pong-not-captured",
        ] {
            let n = t[dir][kind].as_u64().unwrap_or(0);
            if n > 0 {
                expected.insert(format!("{dir} {kind}"), n);
            }
        }
        let mut total = 0;
        for (reason, n) in t[dir]["malformed"].as_object().unwrap() {
            let n = n.as_u64().unwrap();
            total += n;
            *malformed.entry(reason.clone()).or_insert(0) += n;
        }
        if total > 0 {
            expected.insert(format!("{dir} malformed"), total);
        }
    }
    assert_eq!(found, expected, "{stem}: findings");
    assert_eq!(
        summary
            .malformed
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect::<BTreeMap<_, _>>(),
        malformed,
        "{stem}: malformed by reason"
    );
    assert_eq!(
        summary.messages.get("PROP").copied().unwrap_or(0),
        t["s2c"]["props"].as_u64().unwrap(),
        "{stem}: PROPs rebuilt"
    );
    assert_eq!(
        summary.sessions.len() as u64,
        t["sessions"].as_u64().unwrap(),
        "{stem}: sessions"
    );
    let by = if decode_as.is_empty() {
        RecognisedBy::Probe
    } else {
        RecognisedBy::Port
    };
    engine.for_each_session(|s| {
        assert_eq!(s.state, t["state"].as_str().unwrap(), "{stem}: state");
        assert_eq!(s.recognised_by, by, "{stem}");
    });
}

#[test]
fn the_corpus_regenerates_and_the_analyzer_reports_its_truth() {
    let dir = tempfile::tempdir().unwrap();
    for (stem, cfg) in corpus() {
        let (pcap, truth_path) = paths(stem);
        let out = dir.path().join(format!("{stem}.pcap"));
        let out_truth = dir.path().join(format!("{stem}.truth.json"));
        write(&cfg, &run(&cfg), &out, Some(&out_truth)).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&pcap).unwrap(),
            "{stem}.pcap differs from its regeneration"
        );
        assert_eq!(
            std::fs::read_to_string(&out_truth).unwrap(),
            std::fs::read_to_string(&truth_path).unwrap(),
            "{stem}.truth.json differs from its regeneration"
        );
        let size = std::fs::metadata(&pcap).unwrap().len();
        assert!(size < 200_000, "{stem}.pcap is {size} bytes");
        check(stem, &pcap, &truth(stem));
    }
}

#[test]
fn the_corpus_shows_what_it_is_for() {
    let n = |t: &Value, dir: &str, k: &str| t[dir][k].as_u64().unwrap();
    let quiet = |t: &Value| {
        ["c2s", "s2c"].iter().all(|d| {
            [
                "duplicate-packet",
                "resend",
                "sig-gap",
                "sig-regression",
                "violation/auth-repeat",
            ]
            .iter()
            .all(|k| n(t, d, k) == 0)
                && t[d]["malformed"].as_object().unwrap().is_empty()
        })
    };
    for stem in [
        "bg-clean",
        "bg-bigmsg",
        "bg-midsession",
        "bg-opsig-wrap",
        "bg-oneip",
    ] {
        let t = truth(stem);
        assert!(quiet(&t), "{stem}: {t}");
        assert!(n(&t, "s2c", "props") > 5, "{stem}");
    }
    let loss = truth("bg-loss");
    assert!(n(&loss, "s2c", "resend") > 0 && n(&loss, "c2s", "sig-gap") > 0);
    assert!(n(&loss, "s2c", "sig-gap") > 0);
    let reorder = truth("bg-reorder");
    assert!(n(&reorder, "c2s", "sig-regression") > 0);
    assert!(n(&reorder, "s2c", "sig-regression") > 0);
    let dup = truth("bg-dup");
    assert!(n(&dup, "c2s", "duplicate-packet") > 0 && n(&dup, "s2c", "duplicate-packet") > 0);
    // Every malformed kind the codec knows.
    let corrupt = truth("bg-corrupt");
    let mut kinds: Vec<&str> = ["c2s", "s2c"]
        .iter()
        .flat_map(|d| corrupt[d]["malformed"].as_object().unwrap().keys())
        .map(|k| k.as_str())
        .collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "negative-length",
            "short-header",
            "trailing-bytes",
            "truncated-payload",
            "unknown-shape",
            "unknown-type",
            "unknown-version"
        ]
    );
    // The reference form: every session closed; a server that stops
    // answering leaves PINGs unanswered (the clients close), one that never
    // answers leaves AUTHs unanswered.
    for (stem, _) in reference() {
        let t = truth(stem);
        assert_eq!(t["state"], "closed", "{stem}");
        assert_eq!(t["config"]["form"], "reference", "{stem}");
    }
    for (stem, _) in little() {
        assert!(truth(stem)["config"].get("form").is_none(), "{stem}");
    }
    let stops = truth("bg-be-server-stops");
    assert_eq!(n(&stops, "c2s", "ping-unanswered"), 2);
    assert_eq!(n(&stops, "c2s", "auth-unanswered"), 0);
    let down = truth("bg-be-auth-unanswered");
    assert_eq!(n(&down, "c2s", "auth-unanswered"), 2);
    assert_eq!(n(&down, "s2c", "props"), 0);
    for stem in ["bg-be-clean", "bg-be-bigmsg"] {
        let t = truth(stem);
        assert!(quiet(&t), "{stem}: {t}");
        assert_eq!(n(&t, "c2s", "ping-unanswered"), 0, "{stem}");
        assert!(n(&t, "s2c", "props") > 5, "{stem}");
    }
    assert!(n(&truth("bg-be-loss"), "s2c", "resend") > 0);
    assert!(n(&truth("bg-be-reorder"), "c2s", "sig-regression") > 0);
    assert!(n(&truth("bg-be-dup"), "s2c", "duplicate-packet") > 0);
    assert!(
        !truth("bg-be-corrupt")["s2c"]["malformed"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    assert_eq!(truth("bg-midsession")["state"], "midstream");
    assert_eq!(
        truth("bg-midsession")["decode_as"],
        "udp.port==7777,battlegrounds"
    );
    assert_eq!(truth("bg-oneip")["sessions"], 4);
}

/// What the packets of a corpus file say, decoded.
fn datagrams(stem: &str) -> Vec<(std::net::SocketAddr, Vec<u8>)> {
    let mut source = Source::files(&[paths(stem).0]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            out.push((d.src, d.payload.to_vec()));
        }
    }
    out
}

#[test]
fn the_wrap_and_big_message_files_hold_what_they_say() {
    use lwarscope::proto::battlegrounds::wire::{Packet, Payload};
    // op_sig and event_sig pass 255 to 0.
    let mut sigs = [Vec::new(), Vec::new()];
    for (_, p) in datagrams("bg-opsig-wrap") {
        match Packet::new_checked(&p).map(|p| p.payload()) {
            Ok(Payload::MoveOp(m)) => sigs[0].push(m.op_sig),
            Ok(Payload::MoveEvent(m)) => sigs[1].push(m.event_sig),
            _ => {}
        }
    }
    for s in &sigs {
        assert!(s.windows(2).any(|w| w == [255, 0]), "{s:?}");
    }
    // Messages of many blocks.
    let mut most = 0;
    for (_, p) in datagrams("bg-bigmsg") {
        if let Ok(Payload::Msg { block_id, .. }) = Packet::new_checked(&p).map(|p| p.payload()) {
            most = most.max(block_id);
        }
    }
    assert!(most >= 30, "at most {} blocks", most + 1);
    // Several clients behind one IP.
    let mut clients: Vec<_> = datagrams("bg-oneip")
        .into_iter()
        .filter(|(src, _)| src.port() != 7777)
        .map(|(src, _)| src)
        .collect();
    clients.sort();
    clients.dedup();
    assert_eq!(clients.len(), 4);
    assert!(clients.iter().all(|c| c.ip() == clients[0].ip()));
}

#[test]
fn random_faulty_runs_match_their_truth() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 20..44 {
        let f = 0.02 * (seed % 4) as f64;
        let cfg = Config {
            seed,
            clients: 2,
            duration_ms: 2_000,
            faults: Faults {
                loss_before_tap: f,
                loss_after_tap: f,
                duplicate: 0.03,
            },
            reorder: [0.05 * (seed % 3) as f64, 0.05],
            corrupt: [f, 0.05],
            sig_start: (seed * 37 % 256) as u8,
            one_ip: seed % 2 == 0,
            ..Config::default()
        };
        let path = dir.path().join(format!("{seed}.pcap"));
        let truth_path = dir.path().join(format!("{seed}.truth.json"));
        write(&cfg, &run(&cfg), &path, Some(&truth_path)).unwrap();
        let t: Value =
            serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
        check(&format!("seed {seed}"), &path, &t);
    }
}

#[test]
fn sim_proto_battlegrounds_writes_the_capture_and_its_truth() {
    use lwarscope::proto::sim::{Rates, SimRequest};
    let p = proto::by_name("battlegrounds").unwrap();
    let sim = p.sim.expect("Battlegrounds has a simulator");
    let dir = tempfile::tempdir().unwrap();
    let rates = |c2s, s2c| Rates { c2s, s2c };
    let req = SimRequest {
        write: dir.path().join("run.pcap"),
        truth: true,
        seed: 3,
        clients: 2,
        duration_ms: 2_000,
        loss: rates(0.05, 0.0),
        duplicate: rates(0.0, 0.05),
        reorder: rates(0.05, 0.05),
        corrupt: rates(0.0, 0.05),
        tap_miss: Rates::default(),
        byte_order: None,
    };
    let out = sim(&req).unwrap();
    let truth_path = dir.path().join("run.truth.json");
    assert_eq!(out.truth.as_deref(), Some(truth_path.as_path()));
    assert_eq!(out.sessions, 2);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
    assert_eq!(t["frames"].as_u64(), Some(out.frames));
    // Faults per direction: loss only client to server, duplicates only back.
    assert!(t["c2s"]["sig-gap"].as_u64().unwrap() > 0);
    assert_eq!(t["c2s"]["duplicate-packet"], 0);
    assert!(t["s2c"]["duplicate-packet"].as_u64().unwrap() > 0);
    check("sim --proto", &req.write, &t);
    // The same request, the same bytes; no truth when not asked.
    let again = SimRequest {
        write: dir.path().join("again.pcap"),
        truth: false,
        ..req.clone()
    };
    assert_eq!(sim(&again).unwrap().truth, None);
    assert_eq!(
        std::fs::read(&req.write).unwrap(),
        std::fs::read(&again.write).unwrap()
    );
    assert!(!dir.path().join("again.truth.json").exists());
    // What is not modelled is refused by name.
    let miss = SimRequest {
        tap_miss: rates(0.01, 0.0),
        ..req.clone()
    };
    assert_eq!(
        sim(&miss).unwrap_err(),
        "--tap-miss is not simulated for Battlegrounds"
    );
    let none = SimRequest { clients: 0, ..req };
    assert!(sim(&none).is_err());
}

#[test]
#[ignore = "rewrites the corpus: run on purpose"]
fn write_corpus() {
    if std::env::var_os("BG_WRITE_CORPUS").is_none() {
        return;
    }
    for (stem, cfg) in corpus() {
        let (pcap, truth) = paths(stem);
        write(&cfg, &run(&cfg), &pcap, Some(&truth)).unwrap();
    }
}
