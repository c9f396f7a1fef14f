//! The committed corpus in `captures/`: it regenerates byte for byte from the
//! commands of `captures/README.md`, every frame decodes or is explained by an
//! injected fault, and each ground truth is consistent with itself and its pcap.

use clap::Parser;
use etherparse::SlicedPacket;
use lwarscope::engine::Summary;
use lwarscope::proto::lwar::sim::{SimArgs, run};
use lwarscope::proto::lwar::wire::{ErrorKind, Packet, is_lwar};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Parser)]
struct Sim {
    #[command(flatten)]
    args: SimArgs,
}

/// The (file, arguments) of every lwar command in the corpus README (another
/// protocol's, `sim --proto NAME`, is checked by that protocol's corpus test:
/// `tests/vessel/sim.rs`).
fn commands() -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string("captures/README.md").expect("captures/README.md");
    let mut out = Vec::new();
    for line in readme.lines() {
        let Some(start) = line.find("`lwarscope sim ") else {
            continue;
        };
        let rest = &line[start + 1..];
        let cmd = &rest[..rest.find('`').expect("closing backtick")];
        if cmd.contains("--proto") {
            continue;
        }
        let words: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
        let w = words.iter().position(|a| a == "-w").expect("-w FILE");
        let file = Path::new(&words[w + 1])
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        out.push((file, words));
    }
    out
}

fn corpus() -> Vec<PathBuf> {
    commands()
        .into_iter()
        .map(|(f, _)| Path::new("captures").join(f))
        .collect()
}

#[test]
fn the_readme_lists_every_simulated_capture() {
    let mut listed: Vec<String> = commands().into_iter().map(|c| c.0).collect();
    let mut present: Vec<String> = std::fs::read_dir("captures")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sim-") && n.ends_with(".pcap"))
        .collect();
    listed.sort();
    present.sort();
    assert_eq!(listed, present);
    assert!(listed.len() >= 10);
    for f in corpus() {
        let size = std::fs::metadata(&f).unwrap().len();
        assert!(size < 1_000_000, "{} is {size} bytes", f.display());
    }
}

#[test]
fn the_corpus_regenerates_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (file, mut words) in commands() {
        let out = dir.path().join(&file);
        let w = words.iter().position(|a| a == "-w").unwrap();
        words[w + 1] = out.to_string_lossy().into_owned();
        // words[0] is "lwarscope", words[1] is "sim".
        let args = Sim::try_parse_from(words.iter().skip(1)).unwrap().args;
        run(&args, &mut std::io::sink()).unwrap();
        let committed = Path::new("captures").join(&file);
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&committed).unwrap(),
            "{file} differs from its regeneration"
        );
        let truth = |p: &Path| std::fs::read(p.with_extension("truth.json")).unwrap();
        assert!(
            truth(&out) == truth(&committed),
            "{file}: the ground truth differs from its regeneration"
        );
    }
}

/// The decode error a corruption kind gives, if any.
fn expected_error(kind: &str) -> Option<ErrorKind> {
    match kind {
        "corrupt:truncated" | "corrupt:bad-string-length" => Some(ErrorKind::Truncated),
        "corrupt:short-header" => Some(ErrorKind::ShortHeader),
        "corrupt:unknown-type" => Some(ErrorKind::UnknownType),
        "corrupt:deprecated-type" => Some(ErrorKind::DeprecatedType),
        _ => None,
    }
}

/// Every UDP frame of a pcap: (frame number, payload).
fn udp_frames(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let mut cap = pcap::Capture::from_file(path).unwrap();
    let mut out = Vec::new();
    let mut frame = 0;
    while let Ok(p) = cap.next_packet() {
        frame += 1;
        let sliced = SlicedPacket::from_ethernet(p.data).unwrap();
        let Some(etherparse::TransportSlice::Udp(udp)) = sliced.transport else {
            panic!("frame {frame} of {} is not UDP", path.display());
        };
        out.push((frame, udp.payload().to_vec()));
    }
    out
}

#[test]
fn every_frame_decodes_or_shows_an_injected_fault() {
    for path in corpus() {
        let truth: Value =
            serde_json::from_slice(&std::fs::read(path.with_extension("truth.json")).unwrap())
                .unwrap();
        let mut at: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for f in truth["faults"].as_array().unwrap() {
            if let Some(frame) = f["frame"].as_u64() {
                at.entry(frame)
                    .or_default()
                    .push(f["kind"].as_str().unwrap().to_owned());
            }
        }
        let frames = udp_frames(&path);
        let name = path.display();
        let mut lwar = 0;
        for (frame, payload) in &frames {
            let faults = at.get(frame).cloned().unwrap_or_default();
            if !is_lwar(payload) {
                assert_eq!(faults, ["noise"], "{name} frame {frame}: non-lwar frame");
                continue;
            }
            lwar += 1;
            let error = match Packet::new_checked(payload) {
                Err(e) => Some(e.kind()),
                Ok(p) => p.messages().find_map(|m| m.err()).map(|e| e.kind()),
            };
            let explained: Vec<_> = faults.iter().filter_map(|k| expected_error(k)).collect();
            match error {
                None => assert!(explained.is_empty(), "{name} frame {frame}: {faults:?}"),
                Some(e) => assert_eq!(explained, [e], "{name} frame {frame}: {faults:?}"),
            }
        }
        for frame in at.keys() {
            assert!(
                *frame as usize <= frames.len(),
                "{name}: fault past the end"
            );
        }
        let summary: Summary = serde_json::from_value(truth["summary"].clone()).unwrap();
        let packets: u64 = summary
            .sessions
            .iter()
            .map(|s| s.c2s.packets + s.s2c.packets)
            .sum();
        assert_eq!(packets, lwar, "{name}: truth packets vs lwar frames");
    }
}

fn add(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

#[test]
fn every_ground_truth_adds_up() {
    for path in corpus() {
        let name = path.display();
        let truth: Value =
            serde_json::from_slice(&std::fs::read(path.with_extension("truth.json")).unwrap())
                .unwrap();
        assert_eq!(truth["version"], 1);
        let summary: Summary = serde_json::from_value(truth["summary"].clone()).unwrap();
        let (mut messages, mut findings, mut violations, mut malformed) = Default::default();
        for s in &summary.sessions {
            for d in [&s.c2s, &s.s2c] {
                add(&mut messages, &d.messages);
                add(&mut findings, &d.findings);
                add(&mut violations, &d.violations);
                add(&mut malformed, &d.malformed);
                let sum = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
                assert_eq!(
                    d.findings.get("violation").copied().unwrap_or(0),
                    sum(&d.violations),
                    "{name}"
                );
                assert_eq!(
                    d.findings.get("malformed").copied().unwrap_or(0),
                    sum(&d.malformed),
                    "{name}"
                );
                assert!(d.messages.values().all(|&v| v > 0), "{name}: zero count");
                let resends = d.findings.get("resend").copied().unwrap_or(0)
                    + d.findings.get("spurious-resend").copied().unwrap_or(0);
                assert_eq!(d.resends, resends, "{name}");
            }
        }
        assert_eq!(messages, summary.messages, "{name}");
        assert_eq!(findings, summary.findings, "{name}");
        assert_eq!(violations, summary.violations, "{name}");
        assert_eq!(malformed, summary.malformed, "{name}");
    }
}

#[test]
fn the_corpus_shows_what_its_readme_promises() {
    let load = |f: &str| -> (Value, Summary) {
        let v: Value = serde_json::from_slice(
            &std::fs::read(Path::new("captures").join(f).with_extension("truth.json")).unwrap(),
        )
        .unwrap();
        let s = serde_json::from_value(v["summary"].clone()).unwrap();
        (v, s)
    };
    let states = |s: &Summary| {
        s.sessions
            .iter()
            .map(|s| s.state.clone())
            .collect::<Vec<_>>()
    };
    let (_, clean) = load("sim-clean.pcap");
    assert_eq!(states(&clean), ["closed", "closed"]);
    for k in [
        "Connect",
        "Join",
        "Synced",
        "Input",
        "Chat",
        "Name",
        "Disconnect",
        "Leave",
    ] {
        assert!(clean.messages.contains_key(k), "clean lacks {k}");
    }
    assert!(clean.malformed.is_empty());
    let (_, full) = load("sim-full.pcap");
    assert_eq!(full.sessions.len(), 9);
    assert_eq!(full.sessions[8].state, "rejected");
    let (_, timeout) = load("sim-timeout.pcap");
    assert_eq!(states(&timeout), ["closed", "closed", "timed-out"]);
    let (_, eight) = load("sim-eight.pcap");
    assert_eq!(states(&eight), ["closed"; 8]);
    let (_, v6) = load("sim-ipv6.pcap");
    assert!(v6.sessions[0].server.starts_with("[::1]"));
    let (corrupt, _) = load("sim-corrupt.pcap");
    let kinds: Vec<&str> = corrupt["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    for k in [
        "corrupt:truncated",
        "corrupt:short-header",
        "corrupt:unknown-type",
        "corrupt:deprecated-type",
        "corrupt:bad-string-length",
        "corrupt:invalid-utf8",
        "corrupt:oversize",
        "noise",
    ] {
        assert!(kinds.contains(&k), "sim-corrupt lacks {k}");
    }
    let (_, tap) = load("sim-tap-miss.pcap");
    // The capture missed what was delivered: not loss.
    assert!(tap.findings.contains_key("gap") && tap.findings.contains_key("not-captured"));
    assert!(!tap.findings.contains_key("lost"));
    let (_, reorder) = load("sim-reorder.pcap");
    assert!(reorder.findings.contains_key("reordered"));
    let (_, dup) = load("sim-dup.pcap");
    assert!(dup.findings.contains_key("duplicate-packet"));
}

#[test]
fn the_live_capture_decodes_cleanly() {
    let frames = udp_frames(Path::new("captures/live-loopback.pcap"));
    assert!(frames.len() > 100);
    for (frame, payload) in frames {
        assert!(is_lwar(&payload), "frame {frame}");
        let packet = Packet::new_checked(&payload).unwrap();
        assert!(packet.messages().all(|m| m.is_ok()), "frame {frame}");
    }
}
