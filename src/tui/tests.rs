//! Snapshot tests of every pane through ratatui's `TestBackend`, at 80x24 and at
//! 160x48, plus the behaviour behind the keys.

use super::app::{App, SourceInfo};
use super::data::MemoryFeed;
use super::load_app;
use super::pane::Pane;
use crate::capture::OwnedDatagram;
use crate::capture::Timestamp;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind,
};
use std::net::SocketAddr;

use crate::test_vectors as vectors;

/// The real server's traffic (IPv6 loopback), 20 ms apart, then a few faults:
/// a resent packet, a packet with an unknown message type, one cut short.
fn fixture() -> Vec<OwnedDatagram> {
    let addr = |port: u16| SocketAddr::new("::1".parse().unwrap(), port);
    let mut out: Vec<OwnedDatagram> = vectors::real_server()
        .into_iter()
        .map(|v| {
            OwnedDatagram::new(
                v.frame,
                Timestamp::from_millis(1_700_000_000_000 + v.frame * 20),
                addr(v.src_port),
                addr(v.dst_port),
                v.payload,
            )
        })
        .collect();
    let extra = |out: &mut Vec<OwnedDatagram>, of: usize, edit: &dyn Fn(&mut OwnedDatagram)| {
        let mut d = out[of].clone();
        d.frame = out.len() as u64 + 1;
        d.ts = Timestamp::from_millis(1_700_000_000_000 + d.frame * 20);
        edit(&mut d);
        out.push(d);
    };
    // Frame 2 again: the server's Join#1 and the rest, resent.
    extra(&mut out, 1, &|_| {});
    // An Input packet with a type byte nobody knows appended.
    extra(&mut out, 2, &|d| {
        d.payload.push(0x77);
        d.payload_len += 1;
    });
    // An Input packet the snaplen cut short.
    extra(&mut out, 2, &|d| d.payload.truncate(20));
    out
}

fn app() -> App {
    let info = SourceInfo {
        label: "file real-server-clean.pcap".into(),
        live: false,
    };
    load_app(MemoryFeed::new(fixture()), info).unwrap()
}

/// Sends a key, then lets the background filter finish, as a few screens would.
fn key(app: &mut App, code: KeyCode) {
    app.on_event(&Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    app.tick();
    app.finish_filtering();
    app.tick();
}

fn keys(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Draws the app and returns the screen, styles included.
fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| super::draw(f, app)).unwrap();
    t.backend().to_string()
}

/// The text of the screen only.
fn text(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| super::draw(f, app)).unwrap();
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// Snapshots a state of the app at both sizes.
fn snap(name: &str, mut setup: impl FnMut(&mut App)) {
    for (w, h) in SIZES {
        let mut a = app();
        // One draw first, so that page sizes and mouse areas are known.
        screen(&mut a, w, h);
        setup(&mut a);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&mut a, w, h));
    }
}

#[test]
fn snapshot_packets() {
    snap("packets", |a| {
        key(a, KeyCode::Down);
        key(a, KeyCode::Down);
    });
}

#[test]
fn snapshot_graph() {
    // Session 0's packets per second, then its bytes per second.
    snap("graph_packets", |a| {
        key(a, KeyCode::Char('1'));
        key(a, KeyCode::Down);
        key(a, KeyCode::Char('6'));
    });
    snap("graph_bytes", |a| {
        key(a, KeyCode::Char('6'));
        key(a, KeyCode::Char('m'));
    });
}

#[test]
fn the_graph_draws_what_the_timeline_counted() {
    let mut a = app();
    let t = a.timeline.lock().unwrap().clone();
    let [c2s, s2c] = super::ui::graph_points(&t, Some(0), super::pane::Metric::Packets);
    let width = t.width_ns() as f64 / 1e9;
    let count = |p: &[(f64, f64)]| p.iter().map(|(_, y)| y * width).sum::<f64>().round();
    let s = &a.sessions[0];
    assert_eq!(count(&c2s), s.packets[0] as f64);
    assert_eq!(count(&s2c), s.packets[1] as f64);
    // Every measure steps round, both ways.
    key(&mut a, KeyCode::Char('6'));
    assert_eq!(a.focus, Pane::Graph);
    for _ in 0..5 {
        key(&mut a, KeyCode::Char('m'));
    }
    assert_eq!(a.graph.metric, super::pane::Metric::Packets);
    key(&mut a, KeyCode::Left);
    assert_eq!(a.graph.metric, super::pane::Metric::AckDelay);
    assert!(text(&mut a, 80, 24).contains("all sessions: ack delay, mean ms"));
}

#[test]
fn snapshot_sessions() {
    snap("sessions", |a| {
        key(a, KeyCode::Char('1'));
        key(a, KeyCode::Down);
        key(a, KeyCode::Down);
    });
}

#[test]
fn snapshot_detail_and_hex() {
    snap("detail", |a| {
        // Frame 2: the server's Join, Add and more; open it, go to a field.
        key(a, KeyCode::Down);
        key(a, KeyCode::Enter);
        for _ in 0..6 {
            key(a, KeyCode::Char('j'));
        }
    });
}

#[test]
fn snapshot_hex_focused() {
    snap("hex", |a| {
        key(a, KeyCode::Down);
        key(a, KeyCode::Char('4'));
    });
}

#[test]
fn snapshot_findings() {
    snap("findings", |a| {
        key(a, KeyCode::Char('5'));
        key(a, KeyCode::Down);
    });
}

#[test]
fn snapshot_help() {
    snap("help", |a| key(a, KeyCode::Char('?')));
}

#[test]
fn snapshot_filter_input() {
    snap("filter_typing", |a| keys(a, "/Chat bogus"));
    snap("filter_applied", |a| {
        keys(a, "/Chat");
        key(a, KeyCode::Enter);
    });
}

#[test]
fn snapshot_paused_and_following() {
    snap("paused", |a| key(a, KeyCode::Char(' ')));
    snap("following", |a| key(a, KeyCode::Char('f')));
}

#[test]
fn layout_fits_every_size_without_panicking() {
    let mut a = app();
    for (w, h) in [(1, 1), (20, 5), (80, 24), (79, 23), (120, 36), (250, 80)] {
        for pane in Pane::ALL {
            a.focus = pane;
            a.help = pane == Pane::Hex;
            screen(&mut a, w, h);
        }
    }
}

#[test]
fn the_index_decodes_rows_on_demand() {
    let a = app();
    assert_eq!(a.rows.len(), 528);
    let frames: Vec<u64> = a.rows.range(0..a.rows.len()).map(|e| e.frame).collect();
    assert!(frames.windows(2).all(|w| w[0] < w[1]));
    let mut buf = Vec::new();
    assert!(a.payload(&a.row(0).unwrap(), &mut buf));
    assert_eq!(
        buf,
        hex::decode("f27087c50000000000000000010000000105616c696365").unwrap()
    );
    assert_eq!(a.shown_sessions().len(), 2);
}

#[test]
fn enter_on_a_session_lists_its_packets() {
    let mut a = app();
    text(&mut a, 80, 24);
    key(a_focus(&mut a, Pane::Sessions), KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Packets);
    assert_eq!(a.view.session, Some(1));
    let n = a.view_len();
    assert!(n > 0 && n < a.rows.len(), "{n}");
    assert!((0..n).all(|i| a.row(a.view_row(i).unwrap()).unwrap().session == 1));
    // Esc shows everything again.
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.view_len(), a.rows.len());
}

fn a_focus(a: &mut App, p: Pane) -> &mut App {
    a.focus = p;
    a
}

#[test]
fn filter_is_checked_as_you_type_and_applied_on_enter() {
    let mut a = app();
    keys(&mut a, "/Cha");
    assert!(a.input.as_ref().unwrap().error.is_some());
    keys(&mut a, "t");
    assert_eq!(a.input.as_ref().unwrap().error, None);
    key(&mut a, KeyCode::Enter);
    assert!(a.input.is_none());
    let n = a.view_len();
    assert!(n > 0 && n < 20, "{n}");
    let shown = text(&mut a, 160, 48);
    assert!(shown.contains("Chat#"), "{shown}");
    // A bad filter stays in the input line with its error.
    keys(&mut a, "/ nonsense");
    key(&mut a, KeyCode::Enter);
    assert!(a.input.as_ref().unwrap().error.is_some());
    key(&mut a, KeyCode::Esc);
    assert!(a.input.is_none());
    assert_eq!(a.view_len(), n);
}

#[test]
fn enter_on_a_finding_jumps_to_its_packet_and_backspace_comes_back() {
    let mut a = app();
    text(&mut a, 80, 24);
    // Session 1 chosen: its packets and its findings only.
    a.focus = Pane::Sessions;
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    let mut theirs: Vec<u64> = a
        .findings
        .rows()
        .iter()
        .filter(|run| run.first.session == 1)
        .map(|run| a.finding_frame(&run.first).unwrap())
        .collect();
    theirs.sort();
    let target = *theirs.last().unwrap();
    a.focus = Pane::Findings;
    // By time, the last incident is the newest.
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(a.finding_list.items().len(), theirs.len());
    key(&mut a, KeyCode::End);
    let at = a.finding_list.cursor;
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Packets);
    let r = a.selected_row().unwrap();
    assert_eq!(a.row(r).unwrap().frame, target);
    assert_eq!(a.detail.row, Some(r));
    // Back to the finding, then forth to the packet where we left it.
    key(&mut a, KeyCode::Up);
    let left = a.selected_row();
    assert_ne!(left, Some(r));
    key(&mut a, KeyCode::Backspace);
    assert_eq!((a.focus, a.finding_list.cursor), (Pane::Findings, at));
    key(&mut a, KeyCode::Backspace);
    assert_eq!(a.focus, Pane::Packets);
    assert_eq!(a.selected_row(), left);
}

#[test]
fn go_to_frame_selects_it_widening_the_view_and_says_when_it_is_no_game_packet() {
    let mut a = app();
    text(&mut a, 80, 24);
    keys(&mut a, "/Chat");
    key(&mut a, KeyCode::Enter);
    let hidden = (1..=a.rows.len() as u64)
        .find(|&f| {
            let r = a.row_of_frame(f).unwrap();
            !(0..a.view_len()).any(|i| a.view_row(i) == Some(r))
        })
        .unwrap();
    keys(&mut a, &format!(":{hidden}"));
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Packets);
    assert_eq!(a.row(a.selected_row().unwrap()).unwrap().frame, hidden);
    assert!(a.view.filter.is_none(), "the view widened");
    assert_eq!(
        a.message.as_deref(),
        Some(format!("view widened to all packets to show frame {hidden}").as_str())
    );
    // Ctrl-g too; a frame past the end is refused with a message.
    a.on_event(&Event::Key(KeyEvent::new(
        KeyCode::Char('g'),
        KeyModifiers::CONTROL,
    )));
    keys(&mut a, "99999");
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        a.message.as_deref(),
        Some("no game packet at or after frame 99999")
    );
    // Not a number: said in the input line, which stays open.
    keys(&mut a, ":x");
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        a.input.as_ref().unwrap().error.as_deref(),
        Some("a frame number")
    );
}

#[test]
fn the_hex_pane_highlights_the_selected_field() {
    let mut a = app();
    key(&mut a, KeyCode::Enter);
    // Frame 1: header, then appId, ack, timestamp.
    for _ in 0..3 {
        key(&mut a, KeyCode::Down);
    }
    let node = a.detail.selected_node().unwrap().clone();
    assert_eq!(
        (node.label.as_str(), node.span.clone()),
        ("ack", Some(4..8))
    );
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| super::draw(f, &mut a)).unwrap();
    let buf = t.backend().buffer();
    let hex = a.areas.hex;
    // The second hex line's first byte (offset 8) is not highlighted; on the
    // first line, bytes 4..8 are.
    let (x0, y0) = (hex.x + 1 + 5, hex.y + 1);
    let bg = |x: u16, y: u16| buf[(x, y)].bg;
    assert_ne!(bg(x0, y0), ratatui::style::Color::Yellow);
    assert_eq!(bg(x0 + 12, y0), ratatui::style::Color::Yellow);
    assert_ne!(bg(x0, y0 + 1), ratatui::style::Color::Yellow);
}

#[test]
fn follow_and_pause() {
    let mut a = app();
    key(&mut a, KeyCode::Char('f'));
    assert!(a.follow);
    assert_eq!(a.view.cursor.selected, a.rows.len() - 1);
    key(&mut a, KeyCode::Up);
    assert!(!a.follow, "moving up stops following");
    key(&mut a, KeyCode::Char(' '));
    assert!(a.paused.is_some());
    // While paused, new rows are taken in but not shown.
    let shown = a.view_len();
    let mut extra = a.row(0).unwrap();
    extra.frame = 10_000;
    a.apply(super::model::Update::Batch {
        rows: vec![extra],
        findings: vec![],
        endpoints: vec![],
    });
    a.tick();
    assert_eq!(a.view_len(), shown);
    key(&mut a, KeyCode::Char(' '));
    assert_eq!(a.view_len(), shown + 1);
}

#[test]
fn mouse_wheel_scrolls_the_pane_under_it() {
    let mut a = app();
    text(&mut a, 80, 24);
    let p = a.areas.packets;
    a.on_event(&Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: p.x + 3,
        row: p.y + 2,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(a.view.cursor.selected, 3);
}

#[test]
fn quit_keys() {
    let mut a = app();
    key(&mut a, KeyCode::Char('q'));
    assert!(a.quit);
    let mut a = app();
    a.on_event(&Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert!(a.quit);
}

#[test]
fn help_lists_every_key() {
    let mut a = app();
    key(&mut a, KeyCode::Char('?'));
    let shown = text(&mut a, 80, 24);
    for k in [
        "PgUp", "Home", "Tab", "Enter", "/", "follow", "space", "q Ctrl-c", "mouse",
    ] {
        assert!(shown.contains(k), "{k} missing:\n{shown}");
    }
}

/// The fixture over and over (each copy later in time): more rows than one
/// filter job holds, and many findings.
fn big_app(copies: u64) -> App {
    let one = fixture();
    let n = one.len() as u64;
    let datagrams = (0..copies)
        .flat_map(|k| {
            one.iter().cloned().map(move |mut d| {
                d.frame += k * n;
                d.ts = Timestamp(d.ts.nanos() + k * 60_000_000_000);
                d
            })
        })
        .collect();
    let info = SourceInfo {
        label: "big".into(),
        live: false,
    };
    load_app(MemoryFeed::new(datagrams), info).unwrap()
}

/// The rows `text` matches, evaluated one by one on this thread.
fn reference_matches(a: &App, text: &str) -> Vec<usize> {
    let filter = super::filter::DisplayFilter::parse(text).unwrap();
    let mut payload = Vec::new();
    (0..a.rows.len())
        .filter(|&r| {
            let row = a.row(r).unwrap();
            let findings: Vec<_> = a
                .findings_of(r)
                .map(|f| f.to_finding(row.frame, row.ts))
                .collect();
            assert!(a.payload(&row, &mut payload));
            filter.matches(&super::filter::PacketCtx {
                row: &row,
                payload: &payload,
                addresses: a.addresses(&row).unwrap(),
                protocol: a.protocol(&row, &payload),
                dissector: a.dissector(&row, &payload),
                findings: &findings,
            })
        })
        .collect()
}

fn view_rows(a: &App) -> Vec<usize> {
    (0..a.view_len()).map(|i| a.view_row(i).unwrap()).collect()
}

#[test]
fn the_filter_scans_off_the_ui_thread_and_streams_matches() {
    let mut a = big_app(40);
    assert!(a.rows.len() > 20_000, "{}", a.rows.len());
    let expr = "Chat || finding == resend || severity >= error";
    a.set_filter(expr).unwrap();
    // Setting the filter scans nothing on this thread: the worker does it.
    assert_eq!(a.view.scanned, 0);
    assert_eq!(a.filtering(), Some(0.0));
    assert_eq!(a.view_len(), 0);
    a.finish_filtering();
    assert_eq!(a.filtering(), None);
    let want = reference_matches(&a, expr);
    assert!(
        want.len() > 100 && want.len() < a.rows.len(),
        "{}",
        want.len()
    );
    assert_eq!(view_rows(&a), want);
}

#[test]
fn a_new_filter_cancels_the_scan_of_the_old_one() {
    let mut a = big_app(40);
    a.set_filter("Chat").unwrap();
    a.tick();
    a.set_filter("finding == resend").unwrap();
    a.finish_filtering();
    assert_eq!(view_rows(&a), reference_matches(&a, "finding == resend"));
    // Back to everything, then a session: no filter text, still in the background.
    a.set_filter("").unwrap();
    assert_eq!(a.view_len(), a.rows.len());
    a.view.session = Some(1);
    a.set_filter("Input").unwrap();
    a.finish_filtering();
    let want: Vec<usize> = reference_matches(&a, "Input")
        .into_iter()
        .filter(|&r| a.row(r).unwrap().session == 1)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(view_rows(&a), want);
}

#[test]
fn the_selected_packet_stays_selected_once_the_filter_reaches_it() {
    let mut a = big_app(40);
    let want = reference_matches(&a, "Chat");
    let target = want[want.len() / 2];
    // Select that row in the unfiltered view, then filter.
    key(&mut a, KeyCode::Home);
    a.focus = Pane::Packets;
    for _ in 0..target {
        a.on_event(&Event::Key(KeyEvent::new(
            KeyCode::Down,
            KeyModifiers::NONE,
        )));
    }
    assert_eq!(a.selected_row(), Some(target));
    a.set_filter("Chat").unwrap();
    a.finish_filtering();
    assert_eq!(a.selected_row(), Some(target));
}

#[test]
fn findings_show_their_details_from_the_store() {
    let mut a = app();
    let details: Vec<String> = a
        .findings
        .rows()
        .iter()
        .map(|run| a.finding_detail(&run.first))
        .collect();
    assert!(details.iter().any(|d| d.contains("frame")), "{details:?}");
    // The findings pane, by time, shows the first one's detail text.
    key(&mut a, KeyCode::Char('5'));
    key(&mut a, KeyCode::Char('s'));
    // A screen wide enough for the pane to show the whole detail.
    let shown = text(&mut a, 400, 48);
    let first = details.iter().find(|d| !d.is_empty()).unwrap();
    assert!(first.len() >= 20, "{first}");
    assert!(shown.contains(first.as_str()), "{first} not in:\n{shown}");
}

/// A capture's datagrams, as the TUI's memory feed takes them.
fn datagrams_of(path: &str) -> Vec<OwnedDatagram> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let mut source = crate::capture::Source::files(&[path]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let Some(d) = frame.datagram() {
            out.push(d.to_owned_datagram());
        }
    }
    out
}

#[test]
fn the_filter_selects_in_the_tui_what_it_selects_in_the_report() {
    // The report prints `not-captured#37` (its gap in frame 877) for this filter; the
    // TUI must show the packet that carries that finding.
    let info = SourceInfo {
        label: "file sim-tap-miss.pcap".into(),
        live: false,
    };
    let feed = MemoryFeed::new(datagrams_of("captures/sim-tap-miss.pcap"));
    let mut a = load_app(feed, info).unwrap();
    keys(&mut a, "/not-captured && seqno == 37");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.view_len(), 1);
    let row = a.view_row(0).and_then(|i| a.row(i)).unwrap();
    assert_eq!(row.frame, 877);
}

#[test]
fn the_filter_sees_each_frames_lengths_on_the_wire_and_captured() {
    let info = SourceInfo {
        label: "file sim-clean.pcap".into(),
        live: false,
    };
    let mut datagrams = datagrams_of("captures/sim-clean.pcap");
    // Frame 5 as a snaplen of 60 and Ethernet padding would have left it.
    (datagrams[4].frame_len, datagrams[4].frame_cap_len) = (1000, 60);
    let mut a = load_app(MemoryFeed::new(datagrams), info).unwrap();
    a.set_filter("frame.len == 1000 && frame.cap_len == 60")
        .unwrap();
    a.finish_filtering();
    assert_eq!(a.view_len(), 1);
    let row = a.view_row(0).and_then(|i| a.row(i)).unwrap();
    assert_eq!((row.frame, row.frame_len, row.frame_cap_len), (5, 1000, 60));
    // Frame 1: 25 bytes of payload in an Ethernet frame.
    a.set_filter("frame.len == 67 && frame < 3").unwrap();
    a.finish_filtering();
    assert_eq!(a.view_len(), 1);
}

#[test]
fn w_saves_the_packets_in_view_with_their_payloads_and_times() {
    let info = SourceInfo {
        label: "file strs-loss.pcap".into(),
        live: false,
    };
    let datagrams = datagrams_of("captures/strs-loss.pcap");
    let feed = MemoryFeed::new(datagrams.clone());
    let mut a = load_app(feed, info).unwrap();
    a.set_filter("strs.type == ChatMessage").unwrap();
    a.finish_filtering();
    let want: Vec<_> = datagrams
        .iter()
        .filter(|d| lwarscope_payload_type(&d.payload) == Some(0x0300))
        .map(|d| (d.ts, d.payload.clone()))
        .collect();
    assert_eq!(a.view_len(), want.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.pcapng");
    // Typed as a user would: w, a new name, Enter.
    key(&mut a, KeyCode::Char('w'));
    for _ in 0.."lwarscope-view.pcapng".len() {
        key(&mut a, KeyCode::Backspace);
    }
    for c in path.to_str().unwrap().chars() {
        key(&mut a, KeyCode::Char(c));
    }
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        a.message.as_deref(),
        Some(format!("saved {} packets to {}", want.len(), path.display()).as_str())
    );
    let mut source = crate::capture::Source::files(&[&path]).unwrap();
    let mut got = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        let d = frame.datagram().expect("a rebuilt UDP datagram");
        got.push((d.ts, d.payload.to_vec()));
    }
    assert_eq!(got, want);
}

/// A Starstrike packet's type, from its header (bytes 4-5, big-endian).
fn lwarscope_payload_type(payload: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*payload.get(4)?, *payload.get(5)?]))
}

#[test]
fn the_status_bar_never_shows_fewer_frames_than_packets() {
    let mut a = app();
    let packets = a.rows.len();
    // The capture's counters lag the rows by up to a second.
    a.counters.frames = 1;
    let shown = text(&mut a, 160, 48);
    assert!(
        shown.contains(&format!("{packets} frames {packets} packets")),
        "{shown}"
    );
}

/// Every datagram of a capture file of the corpus, in order.
fn corpus(name: &str) -> Vec<OwnedDatagram> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name);
    let mut source = crate::capture::Source::files(&[path]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let crate::capture::FrameClass::Udp(d) = frame.class {
            out.push(d.to_owned_datagram());
        }
    }
    out
}

/// The packets pane reads each packet as its session does (Battlegrounds'
/// byte order, settled from the session's bytes), as the report does: a
/// little-endian session and the reference's big-endian one in one stream
/// both show the ids that were sent (0x0100_1000.. and 0x1234 = 4660), on
/// the packet lines, in the detail pane and through `/`.
#[test]
fn battlegrounds_sessions_are_read_in_their_own_byte_order() {
    let mut datagrams = corpus("bg-clean.pcap");
    // Ids of 0x0100_1000 and up: read big-endian, one packet alone would take
    // its id for the smaller 0x0010_0001; the session's other packets say
    // little-endian.
    for d in &mut datagrams {
        d.payload[3] = 1;
    }
    let le = datagrams.len();
    let start = datagrams.last().unwrap().ts.nanos() + 1_000_000_000;
    for (i, mut d) in corpus("bg-reference-handshake.pcap")
        .into_iter()
        .enumerate()
    {
        d.frame = (le + i + 1) as u64;
        d.ts = Timestamp(start + i as u64 * 1_000_000);
        datagrams.push(d);
    }
    let expected: Vec<u32> = datagrams
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let id: [u8; 4] = d.payload[..4].try_into().unwrap();
            match i < le {
                true => u32::from_le_bytes(id),
                false => u32::from_be_bytes(id),
            }
        })
        .collect();
    let info = SourceInfo {
        label: "bg".into(),
        live: false,
    };
    let a = load_app(MemoryFeed::new(datagrams), info).unwrap();
    let mut payload = Vec::new();
    let mut wrong = Vec::new();
    for (r, want) in expected.iter().enumerate() {
        let row = a.row(r).unwrap();
        assert!(a.payload(&row, &mut payload));
        let mut line = String::new();
        let _ = a.dissector(&row, &payload).header(&payload, &mut |h| {
            line.push_str(&format!("{}={} ", h.short, h.value));
        });
        if !line.contains(&format!("sid={want} ")) {
            wrong.push(format!("row {r}: {line}"));
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
    assert_eq!(reference_matches(&a, "bg.session_id == 0x1234").len(), 9);
    assert!(!reference_matches(&a, "bg.session_id == 0x01001000").is_empty());
}

#[test]
fn a_flood_of_findings_stays_at_the_cap_and_the_pane_says_what_was_folded() {
    use super::model::{LOG_ROWS, LoggedFinding, Update};
    use crate::engine::{Detail, Direction, Finding, FindingKind};
    let mut a = app();
    let kept = a.findings.len();
    let before = a.findings.total();
    // One finding a session, each a row of its own, until the cap; then
    // 12 000 `lost` and 345 `reordered` more, which only the counts keep.
    let finding = |kind, session| {
        let f = Finding {
            kind,
            rule: None,
            frame: 3,
            ts: Timestamp(0),
            session,
            direction: Direction::ServerToClient,
            seqno: Some(9),
            detail: Detail::None,
        };
        (3, LoggedFinding::new(&f, Default::default()))
    };
    let to_cap = LOG_ROWS - kept;
    let findings = (0..to_cap + 12_000)
        .map(|i| finding(FindingKind::LOST, 1000 + i))
        .chain((0..345).map(|i| finding(FindingKind::REORDERED, 900_000 + i)))
        .collect();
    a.apply(Update::Batch {
        rows: vec![],
        findings,
        endpoints: vec![],
    });
    a.tick();
    assert_eq!(a.findings.len(), LOG_ROWS);
    assert_eq!(a.findings.total(), before + to_cap as u64 + 12_345);
    key(&mut a, KeyCode::Char('5'));
    let shown = text(&mut a, 160, 48);
    assert!(
        shown.contains("12345 more findings folded: lost 12000, reordered 345"),
        "{shown}"
    );
    let title = format!("{} findings in {LOG_ROWS} incidents", a.findings.total());
    assert!(shown.contains(&title), "{shown}");
    // The packet still shows the kept findings raised on it, and the pane
    // still jumps.
    assert!(a.findings_of(2).count() > 0);
    // The last kind opened, its first incident.
    key(&mut a, KeyCode::End);
    key(&mut a, KeyCode::Enter);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Packets);
}

fn corrupt() -> App {
    let info = SourceInfo {
        label: "file sim-corrupt.pcap".into(),
        live: false,
    };
    load_app(
        MemoryFeed::new(datagrams_of("captures/sim-corrupt.pcap")),
        info,
    )
    .unwrap()
}

/// The severity and label of each line of the findings pane (kinds and
/// incidents alike).
fn finding_lines(a: &App) -> Vec<(crate::engine::Severity, String, bool)> {
    use super::pane::FindingItem;
    a.finding_list
        .items()
        .iter()
        .map(|item| match *item {
            FindingItem::Group { key, .. } => {
                let run = a.finding_list.first_of(&a.findings, key).unwrap();
                (run.first.severity(), run.first.label().to_string(), true)
            }
            FindingItem::Incident(i) => {
                let f = a.findings.get(i as usize).unwrap().first;
                (f.severity(), f.label().to_string(), false)
            }
        })
        .collect()
}

#[test]
fn findings_open_worst_first_grouped_by_kind_and_sort_by_time_on_s() {
    use crate::engine::Severity;
    let mut a = corrupt();
    let lines = finding_lines(&a);
    // One line per kind, worst first: every error kind before any warning,
    // every warning before any note.
    assert!(lines.iter().all(|l| l.2), "{lines:?}");
    assert!(lines.windows(2).all(|w| w[0].0 >= w[1].0), "{lines:?}");
    assert_eq!(lines[0], (Severity::Error, "malformed".into(), true));
    let kinds: std::collections::HashSet<_> = lines.iter().map(|l| &l.1).collect();
    assert_eq!(kinds.len(), lines.len(), "one line per kind");
    // Each kind counts every finding of it; together, every finding.
    let total: u64 = a
        .finding_list
        .items()
        .iter()
        .map(|i| match i {
            super::pane::FindingItem::Group { findings, .. } => *findings,
            _ => 0,
        })
        .sum();
    assert_eq!(total, a.findings.total());
    // `!` focuses the worst and opens it: its incidents, in time order.
    key(&mut a, KeyCode::Char('!'));
    assert_eq!(
        (a.focus, a.finding_list.cursor.selected),
        (Pane::Findings, 0)
    );
    let malformed: Vec<u64> = a
        .finding_list
        .items()
        .iter()
        .skip(1)
        .map_while(|i| match i {
            super::pane::FindingItem::Incident(i) => {
                a.finding_frame(&a.findings.get(*i as usize).unwrap().first)
            }
            _ => None,
        })
        .collect();
    assert!(malformed.len() > 10, "{malformed:?}");
    assert!(malformed.windows(2).all(|w| w[0] <= w[1]), "{malformed:?}");
    let shown = text(&mut a, 80, 24);
    assert!(
        shown.contains("▾ error   malformed ×41 in 36 incidents"),
        "{shown}"
    );
    // Enter on the kind closes it; `s` lists every incident by time.
    key(&mut a, KeyCode::Enter);
    assert!(finding_lines(&a).iter().all(|l| l.2));
    key(&mut a, KeyCode::Char('s'));
    let frames: Vec<u64> = a
        .finding_list
        .items()
        .iter()
        .map(|i| match i {
            super::pane::FindingItem::Incident(i) => a
                .finding_frame(&a.findings.get(*i as usize).unwrap().first)
                .unwrap(),
            _ => panic!("a kind listed by time"),
        })
        .collect();
    assert_eq!(frames.len(), a.findings.len());
    assert!(frames.windows(2).all(|w| w[0] <= w[1]));
    assert!(text(&mut a, 160, 45).contains("by time"));
}

#[test]
fn the_filter_keeps_findings_by_their_packet_or_their_own_fields() {
    use crate::engine::Severity;
    let mut a = corrupt();
    a.finding_list.order = super::pane::Order::Time;
    let kept = |a: &mut App, expr: &str| {
        a.set_filter(expr).unwrap();
        a.finish_filtering();
        a.tick();
        finding_lines(a)
    };
    let errors = kept(&mut a, "severity == error");
    assert_eq!(
        errors.len(),
        a.findings
            .rows()
            .iter()
            .filter(|r| r.first.severity() == Severity::Error)
            .count()
    );
    assert!(errors.iter().all(|l| l.0 == Severity::Error));
    let repeats = kept(&mut a, "kind == repeat");
    assert!(!repeats.is_empty() && repeats.iter().all(|l| l.1 == "repeat"));
    // A filter on packets alone keeps the findings of the packets it keeps.
    let of_session = kept(&mut a, "session == 2");
    let want = a
        .findings
        .rows()
        .iter()
        .filter(|r| r.first.session == 2)
        .count();
    assert_eq!(of_session.len(), want);
    // The status bar says how many of each the filter kept.
    let (_, findings) = a.finding_list.shown();
    let shown = text(&mut a, 160, 45);
    let said = format!("kept {} packets, {findings} findings", a.view_len());
    assert!(shown.contains(&said), "{said} not in:\n{shown}");
    assert!(shown.contains(&format!(
        "{findings} of {} findings kept",
        a.findings.total()
    )));
}

/// The text of a screen before the first of `needles`, and whether one is there.
fn before_first<'a>(screen: &'a str, needles: &[&str]) -> &'a str {
    let at = needles.iter().filter_map(|n| screen.find(n)).min();
    &screen[..at.unwrap_or(screen.len())]
}

#[test]
fn the_first_screen_names_the_errors_before_any_note() {
    for (w, h) in [(160, 45), (80, 24)] {
        let mut a = corrupt();
        let shown = text(&mut a, w, h);
        let notes = ["repeat", "input-gap", "duplicate-packet", " note "];
        let head = before_first(&shown, &notes);
        assert!(head.contains("55 errors"), "{w}x{h}:\n{shown}");
        assert!(head.contains("malformed"), "{w}x{h}:\n{shown}");
        // The worst findings themselves, in the findings pane.
        assert!(shown.contains("error   malformed ×41"), "{w}x{h}:\n{shown}");
    }
}

#[test]
fn the_strip_counts_errors_and_warnings_by_kind_at_any_width() {
    let a = corrupt();
    let at = |w: usize| super::ui::strip_text(&a.findings, w);
    assert_eq!(
        at(160),
        " 55 errors: malformed 41, violation 14 │ 8 warnings: oversize 8 │ 76 notes  ! worst"
    );
    assert_eq!(
        at(80),
        " 55 errors: malformed 41, violation 14 │ 8 warnings: oversize 8  ! worst"
    );
    assert_eq!(at(30), " 55 errors │ 8 warnings");
    // The strip fits: at 20 columns, it ends in an ellipsis.
    let mut a = corrupt();
    let shown = text(&mut a, 20, 6);
    assert_eq!(shown.lines().next().unwrap(), " 55 errors │ 8 warn…");
    let info = SourceInfo {
        label: "clean".into(),
        live: false,
    };
    let feed = MemoryFeed::new(datagrams_of("captures/sim-clean.pcap"));
    let mut clean = load_app(feed, info).unwrap();
    let top = text(&mut clean, 80, 24);
    assert!(top.starts_with(" no errors, no warnings"), "{top}");
}

#[test]
fn at_80x24_sessions_keep_full_client_addresses_and_long_lines_end_in_an_ellipsis() {
    let mut a = corrupt();
    let shown = text(&mut a, 80, 24);
    for client in ["127.0.0.2:50001", "127.0.0.3:50002"] {
        assert!(shown.contains(client), "{client}:\n{shown}");
    }
    // The server column goes first, and states are abbreviated.
    assert!(!shown.contains("server"), "{shown}");
    assert!(shown.contains(" closd "), "{shown}");
    // A packet line too long for the pane ends in an ellipsis at its edge.
    let line = shown
        .lines()
        .find(|l| l.contains("     1    0.000000"))
        .unwrap();
    assert!(line.ends_with("…┃"), "{line}");
}

#[test]
fn on_quit_one_line_sums_up_the_session() {
    let mut a = corrupt();
    assert_eq!(
        a.summary(),
        "lwarscope: 1278 frames, 1251 game packets, 3 sessions, 55 errors, 8 warnings, 76 notes"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.pcapng");
    a.set_filter("malformed").unwrap();
    a.finish_filtering();
    let n = a.save_view(&path).unwrap();
    a.saved.push((path.clone(), n));
    assert!(
        a.summary()
            .ends_with(&format!("; saved {n} packets to {}", path.display()))
    );
}

#[test]
fn the_help_lists_the_keys_docs_tui_md_lists() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tui.md")).unwrap();
    let table = doc
        .split("<!-- keys:")
        .nth(1)
        .and_then(|t| t.split("<!-- end of keys -->").next())
        .expect("the keys table of docs/tui.md");
    let rows: Vec<(String, String)> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Key ") && !l.starts_with("| ---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            let k = cells[0].trim_start().replace("&nbsp;", " ");
            (k, cells[1].trim_end().to_owned())
        })
        .collect();
    let keys: Vec<(String, String)> = super::ui::KEYS
        .iter()
        .map(|(k, what)| ((*k).to_owned(), (*what).to_owned()))
        .collect();
    assert_eq!(rows, keys);
    // The help fits an 80x24 terminal whole.
    let mut a = app();
    key(&mut a, KeyCode::Char('?'));
    let shown = text(&mut a, 80, 24);
    for (k, what) in super::ui::KEYS {
        assert!(shown.contains(what), "{k}: {what} not in:\n{shown}");
    }
}

#[test]
fn small_screens_show_the_findings_until_the_user_looks_at_packets() {
    let mut a = corrupt();
    text(&mut a, 80, 24);
    assert!(!a.areas.findings.is_empty() && a.areas.detail.is_empty());
    key(&mut a, KeyCode::Down);
    text(&mut a, 80, 24);
    assert!(a.areas.findings.is_empty() && !a.areas.detail.is_empty());
    key(&mut a, KeyCode::Char('!'));
    text(&mut a, 80, 24);
    assert!(!a.areas.findings.is_empty() && a.areas.detail.is_empty());
    // Tab on to the graph and round to the sessions: the findings stay.
    for _ in 0..2 {
        key(&mut a, KeyCode::Tab);
    }
    assert_eq!(a.focus, Pane::Sessions);
    text(&mut a, 80, 24);
    assert!(!a.areas.findings.is_empty());
}

/// A finding logged after the filter has scanned its packet (a `lost` raised
/// on an earlier packet, the end of the capture's) is filtered too: kept in
/// the findings pane, its packet joined to the packets kept.
#[test]
fn findings_logged_after_the_scan_are_filtered_too() {
    use super::model::{LoggedFinding, Update};
    use crate::engine::{Detail, Direction, Finding, FindingKind};
    let mut a = app();
    a.set_filter("kind == lost").unwrap();
    a.finish_filtering();
    a.tick();
    assert_eq!((a.view_len(), a.finding_list.items().len()), (0, 0));
    let frame = a.row(40).unwrap().frame;
    let f = Finding {
        kind: FindingKind::LOST,
        rule: None,
        frame,
        ts: Timestamp(0),
        session: 0,
        direction: Direction::ServerToClient,
        seqno: Some(9),
        detail: Detail::None,
    };
    a.apply(Update::Batch {
        rows: vec![],
        findings: vec![(frame, LoggedFinding::new(&f, Default::default()))],
        endpoints: vec![],
    });
    a.tick();
    assert_eq!(view_rows(&a), [40]);
    let shown = finding_lines(&a);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].1, "lost");
}
