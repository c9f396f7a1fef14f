//! `--plot FILE.svg`: the timeline behind it counts what the report counts, and
//! the picture, rendered by an independent renderer (resvg, a dev-dependency:
//! nothing to install), shows each session where its key says.

use crate::common;

use common::lwarscope;
use lwarscope::capture::{FrameClass, Source};
use lwarscope::report::timeline::Timeline;
use lwarscope::report::{Analysis, CaptureInfo};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lwarscope-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn the_timeline_counts_what_the_report_counts() {
    for capture in [
        "captures/sim-loss.pcap",
        "captures/strs-loss.pcap",
        "captures/bg-loss.pcap",
        "captures/ksy-vessel-faults.pcap",
        "captures/mixed-lwar-strs.pcap",
    ] {
        let mut source = Source::files(&[root().join(capture)]).unwrap();
        let mut analysis = Analysis::new(Timeline::new());
        while let Some(frame) = source.next_frame().unwrap() {
            if let FrameClass::Udp(d) = frame.class {
                analysis.datagram(&d);
            }
        }
        let (outcome, timeline) = analysis.finish(CaptureInfo::default());
        assert!(!outcome.sessions.is_empty(), "{capture}");
        for s in &outcome.sessions {
            let series = timeline.session(s.id).expect("every session is followed");
            for (dir, view) in [(0, &s.c2s), (1, &s.s2c)] {
                let sum = |f: fn(&lwarscope::report::stats::DirInterval) -> u64| -> u64 {
                    (0..timeline.len()).map(|i| f(&series.bucket(i)[dir])).sum()
                };
                assert_eq!(
                    sum(|d| d.packets),
                    view.packets,
                    "{capture} #{} packets",
                    s.id
                );
                assert_eq!(sum(|d| d.bytes), view.bytes, "{capture} #{} bytes", s.id);
                assert_eq!(
                    sum(|d| d.resends),
                    view.resends,
                    "{capture} #{} resends",
                    s.id
                );
                assert_eq!(sum(|d| d.lost), view.lost, "{capture} #{} lost", s.id);
                assert_eq!(
                    sum(|d| u64::from(d.acks.count)),
                    view.ack_samples,
                    "{capture} #{} ack samples",
                    s.id
                );
            }
        }
        assert!(timeline.len() <= lwarscope::report::timeline::MAX_BUCKETS);
    }
}

/// The picture rendered by resvg: its size and RGB pixels (premultiplied by
/// alpha, so a transparent background reads as black, as no line colour is).
fn render(svg: &Path) -> (u32, u32, Vec<u8>) {
    use resvg::{tiny_skia, usvg};
    let data = std::fs::read(svg).unwrap();
    let tree = usvg::Tree::from_data(&data, &usvg::Options::default()).expect("the SVG parses");
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let rgb = pixmap
        .data()
        .chunks(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (size.width(), size.height(), rgb)
}

/// Pixels of `colour` (within a little antialiasing) in the rows `rows`.
fn count(image: &(u32, u32, Vec<u8>), colour: [u8; 3], rows: std::ops::Range<u32>) -> usize {
    let (w, _, rgb) = image;
    rows.flat_map(|y| (0..*w).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let i = 3 * (y * w + x) as usize;
            rgb[i..i + 3]
                .iter()
                .zip(colour)
                .all(|(&a, b)| a.abs_diff(b) <= 12)
        })
        .count()
}

const BLUE: [u8; 3] = [0, 114, 178];
const VERMILLION: [u8; 3] = [213, 94, 0];

#[test]
fn the_picture_shows_each_session_panel_by_panel() {
    let svg = scratch("loss.svg");
    let out = lwarscope()
        .args(["-r", "captures/strs-loss.pcap", "-q", "--plot"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "-q with --plot prints nothing");
    let text = std::fs::read_to_string(&svg).unwrap();
    for panel in [
        "packets/s",
        "resends/s",
        "lost reliable messages/s",
        "ack delay, mean (ms)",
        "captures/strs-loss.pcap: 3 of 3 sessions, in buckets of 100 ms",
    ] {
        assert!(text.contains(panel), "{panel}");
    }
    for key in [
        "#0 10.0.1.1:50000 c2s",
        "#1 10.0.1.3:50002 s2c",
        "#2 10.0.1.2:50001 c2s",
    ] {
        assert!(text.contains(key), "{key}");
    }

    let image = render(&svg);
    assert_eq!((image.0, image.1), (1200, 1000));
    // The key: the busiest session (#1) first, in blue, then #0 in vermillion.
    let key = |k: u32| 80 + 20 * k;
    assert!(count(&image, BLUE, key(0) - 1..key(0) + 2) >= 15);
    assert!(count(&image, VERMILLION, key(2) - 1..key(2) + 2) >= 15);
    // Each panel holds a quarter of the height under the title: both
    // sessions' lines are drawn in the packets and the lost panels.
    let panel = |n: u32| 40 + 240 * n + 30..40 + 240 * (n + 1) - 30;
    for n in [0, 2] {
        assert!(count(&image, BLUE, panel(n)) > 100, "panel {n}");
        assert!(count(&image, VERMILLION, panel(n)) > 100, "panel {n}");
    }
}

#[test]
fn a_clean_capture_draws_no_loss() {
    let svg = scratch("clean.svg");
    lwarscope()
        .args(["-r", "captures/strs-clean.pcap", "--plot"])
        .arg(&svg)
        .assert()
        .success();
    let image = render(&svg);
    // The lost panel, above its zero line (a few pixels over the x axis).
    let lost = 40 + 240 * 2 + 30..40 + 240 * 3 - 40;
    assert_eq!(count(&image, BLUE, lost.clone()), 0);
    assert_eq!(count(&image, VERMILLION, lost), 0);
}

#[test]
fn plot_options_that_cannot_apply_are_refused() {
    for (args, says) in [
        (
            &["-r", "captures/sim-loss.pcap", "--plot", "x.png"][..],
            "--plot draws SVG",
        ),
        (
            &["-r", "captures/", "--plot", "x.svg"][..],
            "--plot draws one capture",
        ),
        (
            &["-r", "captures/sim-loss.pcap", "--tui", "--plot", "x.svg"][..],
            "--plot applies to printed output",
        ),
    ] {
        let out = lwarscope().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let out = lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "--plot",
            "/nonexistent/dir/x.svg",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dir/x.svg"));
}
