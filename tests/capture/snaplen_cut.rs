//! A capture cut by the snaplen: "a packet the capture cut short tells nothing
//! about what it did not keep". A real session of each protocol (and lwar's
//! lossy one, Vessel's and Timewarp's faults) is cut at every offset (every
//! snaplen from 0 to its longest frame, as `editcap -s` cuts); the other
//! captures of faults at every fourth offset and just below each frame
//! length. The cut capture must raise no finding the whole capture does not
//! raise (the `truncated` findings aside), and exactly one `truncated` per
//! datagram of a protocol that the snaplen cut, whatever the cut ends on (a
//! message boundary included).

use lwarscope::capture::synth::PcapWriter;
use lwarscope::capture::{FrameClass, LinkType, Source, Timestamp};
use lwarscope::engine::{Finding, FindingKind, Flow, Observer, PacketEvent};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A finding as the comparison sees it: kind, rule, frame, direction, seqno.
type Key = (
    &'static str,
    Option<&'static str>,
    u64,
    &'static str,
    Option<u32>,
);

#[derive(Default)]
struct Collect {
    findings: BTreeMap<Key, u64>,
    truncated: u64,
    /// Recognised datagrams the capture cut short.
    cut: u64,
    /// Of `cut`: those whose packet raised exactly one `truncated`.
    cut_with_one_truncated: u64,
}

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        if f.kind == FindingKind::TRUNCATED {
            self.truncated += 1;
            return;
        }
        // A reliable message captured again is a `repeat` or a `resend` by the
        // direction's smoothed ack delay, which a cut capture measures on the
        // messages it kept: either is the same event, a copy captured again.
        let kind = if f.kind == FindingKind::REPEAT {
            FindingKind::RESEND
        } else {
            f.kind
        };
        let key = (
            kind.name(),
            f.rule.map(|r| r.name()),
            f.frame,
            f.direction.name(),
            f.seqno,
        );
        *self.findings.entry(key).or_default() += 1;
    }

    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        if e.datagram.truncated_by_capture() {
            self.cut += 1;
            let n = e
                .findings
                .iter()
                .filter(|f| f.kind == FindingKind::TRUNCATED)
                .count();
            if n == 1 {
                self.cut_with_one_truncated += 1;
            }
        }
        Flow::Continue
    }
}

fn analyse(path: &Path) -> Collect {
    let mut source = Source::files(&[path]).expect("capture opens");
    let mut engine = lwarscope::proto::engine(Default::default());
    let mut collect = Collect::default();
    while let Some(frame) = source.next_frame().expect("capture reads") {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut collect);
        }
    }
    engine.finish(&mut collect);
    collect
}

struct Frames {
    link: LinkType,
    frames: Vec<(Timestamp, Vec<u8>)>,
}

fn read_frames(path: &Path) -> Frames {
    let mut source = Source::files(&[path]).expect("capture opens");
    let mut frames = Vec::new();
    let mut link = None;
    while let Some(frame) = source.next_frame().expect("capture reads") {
        assert_eq!(frame.cap_len, frame.orig_len, "the corpus is not cut");
        link = Some(frame.link);
        frames.push((frame.ts, frame.data.to_vec()));
    }
    Frames {
        link: link.expect("frames"),
        frames,
    }
}

fn write_cut(frames: &Frames, snaplen: usize, path: &Path) {
    let mut w = PcapWriter::create(path, frames.link).expect("temporary file");
    for (ts, data) in &frames.frames {
        let kept = data.len().min(snaplen);
        w.write_cut(*ts, &data[..kept], data.len());
    }
    w.finish().expect("written");
}

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// Cuts `name` at every snaplen and compares.
fn check_every_cut(name: &str) {
    check_cuts(name, 1);
}

/// Cuts `name` at every `step`-th snaplen (and the one just below each frame
/// length) and compares: for the captures of faults, which add fault patterns
/// to the clean sessions cut at every offset, in less time.
fn check_cuts(name: &str, step: usize) {
    let path = capture(name);
    let whole = analyse(&path);
    assert_eq!(whole.cut, 0);
    let frames = read_frames(&path);
    let longest = frames.frames.iter().map(|(_, d)| d.len()).max().unwrap();
    let dir = tempfile::tempdir().expect("temporary directory");
    let cut_path = dir.path().join("cut.pcap");
    let mut failures = Vec::new();
    let mut by_kind: BTreeMap<&'static str, (u64, String)> = BTreeMap::new();
    let mut cut_datagrams = 0;
    let mut snaplens: Vec<usize> = (0..longest).step_by(step).collect();
    snaplens.extend(frames.frames.iter().map(|(_, d)| d.len() - 1));
    snaplens.sort_unstable();
    snaplens.dedup();
    for snaplen in snaplens {
        write_cut(&frames, snaplen, &cut_path);
        let cut = analyse(&cut_path);
        cut_datagrams += cut.cut;
        // A repeat after an ack is a `spurious-resend` once the round trip
        // to its sender, which the capture measures on what it kept, had
        // passed, and a `repeat` ("unconfirmed") before: a cut capture may
        // call unconfirmed what the whole proved spurious (a weaker claim),
        // never the reverse.
        let whole_count = |k: &Key| {
            let spurious = (k.0 == FindingKind::RESEND.name())
                .then(|| (FindingKind::SPURIOUS_RESEND.name(), k.1, k.2, k.3, k.4))
                .and_then(|s| whole.findings.get(&s).copied())
                .unwrap_or(0);
            whole.findings.get(k).copied().unwrap_or(0) + spurious
        };
        let extra: Vec<_> = cut
            .findings
            .iter()
            .filter(|(k, n)| whole_count(k) < **n)
            .map(|(k, n)| (*k, *n))
            .collect();
        for (k, _) in &extra {
            let e = by_kind
                .entry(k.1.unwrap_or(k.0))
                .or_insert((0, format!("snaplen {snaplen}: {k:?}")));
            e.0 += 1;
        }
        if !extra.is_empty() {
            failures.push(format!(
                "snaplen {snaplen}: {} findings the whole capture does not have, e.g. {:?}",
                extra.len(),
                &extra[..extra.len().min(4)]
            ));
        }
        if cut.truncated != cut.cut || cut.cut_with_one_truncated != cut.cut {
            failures.push(format!(
                "snaplen {snaplen}: {} datagrams cut, {} truncated findings, {} packets with exactly one",
                cut.cut, cut.truncated, cut.cut_with_one_truncated
            ));
        }
    }
    assert!(cut_datagrams > 0, "{name}: nothing was cut");
    assert!(
        failures.is_empty(),
        "{name}: {} of {longest} snaplens fail; by kind: {by_kind:#?}\n{}",
        failures.len(),
        failures[..failures.len().min(6)].join("\n")
    );
}

#[test]
fn lwar_sim_clean_cut_at_every_offset() {
    check_every_cut("sim-clean.pcap");
}

#[test]
fn lwar_real_server_cut_at_every_offset() {
    check_every_cut("real-server-clean.pcap");
}

#[test]
fn lwar_with_losses_cut_at_every_offset() {
    check_every_cut("sim-loss.pcap");
}

#[test]
fn lwar_with_faults_cut_at_many_offsets() {
    for name in [
        "sim-eight.pcap",
        "sim-reorder.pcap",
        "sim-dup.pcap",
        "sim-corrupt.pcap",
        "sim-full.pcap",
        "sim-ipv6.pcap",
        "sim-tap-miss.pcap",
        "sim-timeout.pcap",
        "live-loopback.pcap",
    ] {
        check_cuts(name, 4);
    }
}

#[test]
fn starstrike_cut_at_every_offset() {
    check_every_cut("strs-clean.pcap");
}

#[test]
fn starstrike_with_faults_cut_at_many_offsets() {
    for name in [
        "strs-loss.pcap",
        "strs-reorder.pcap",
        "strs-dup.pcap",
        "strs-retransmit-limit.pcap",
        "strs-reject.pcap",
        "strs-corrupt.pcap",
        "strs-tapmiss.pcap",
        "strs-drift.pcap",
    ] {
        check_cuts(name, 4);
    }
}

#[test]
fn battlegrounds_cut_at_every_offset() {
    check_every_cut("bg-clean.pcap");
}

#[test]
fn battlegrounds_with_faults_cut_at_many_offsets() {
    for name in [
        "bg-bigmsg.pcap",
        "bg-loss.pcap",
        "bg-reorder.pcap",
        "bg-dup.pcap",
        "bg-corrupt.pcap",
        "bg-oneip.pcap",
        "bg-opsig-wrap.pcap",
    ] {
        check_cuts(name, 4);
    }
}

#[test]
fn described_vessel_cut_at_every_offset() {
    check_every_cut("ksy-vessel-faults.pcap");
}

#[test]
fn described_timewarp_cut_at_every_offset() {
    check_every_cut("ksy-timewarp-faults.pcap");
}

#[test]
fn mixed_lwar_and_starstrike_cut_at_every_offset() {
    check_every_cut("mixed-lwar-strs.pcap");
}
