//! The terminal UI reads through the run loop (`lwarscope::run`), as the
//! printed report does: a large capture is read on two threads there too.
//! Its data side must then show exactly what it shows on one thread: the
//! same rows, findings, sessions and screen. Its own binary: it sets
//! `LWARSCOPE_THREADS` in its environment.

use lwarscope::capture::Source;
use lwarscope::tui::app::{App, SourceInfo};
use lwarscope::tui::data::{self, Stop, Total};
use lwarscope::tui::model::Update;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;

/// The app as the data side leaves it once `file` is read, on `threads`
/// threads (`LWARSCOPE_THREADS`).
fn load(file: &Path, threads: &str) -> App {
    // SAFETY: this binary's only test sets it, before any thread reads it.
    unsafe { std::env::set_var("LWARSCOPE_THREADS", threads) };
    let (writer, reader) = lwarscope::tui::store::store().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let source = Source::files(&[file]).unwrap();
    let total = Total::Bytes(Some(std::fs::metadata(file).unwrap().len()));
    let engine = lwarscope::run::args::DecodeArgs::default().engine();
    let side = data::spawn(move || source, total, engine, writer, Stop::default(), tx).unwrap();
    let info = SourceInfo {
        label: "file".into(),
        live: false,
    };
    let mut app = App::new(info, reader);
    app.timeline = std::sync::Arc::clone(&side.timeline);
    for update in rx.iter() {
        let last = matches!(update, Update::Finished);
        app.apply(update);
        if last {
            break;
        }
    }
    side.shutdown();
    app.tick();
    app
}

fn screen(app: &mut App) -> String {
    let mut t = Terminal::new(TestBackend::new(160, 45)).unwrap();
    t.draw(|f| lwarscope::tui::draw(f, app)).unwrap();
    t.backend().to_string()
}

#[test]
fn one_thread_and_two_show_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["captures/sim-loss.pcap", "captures/mixed-lwar-strs.pcap"] {
        let file = root.join(name);
        let mut one = load(&file, "1");
        let mut two = load(&file, "2");
        assert!(one.rows.len() > 100, "{name}: {} rows", one.rows.len());
        assert_eq!(one.rows.len(), two.rows.len(), "{name}");
        for i in 0..one.rows.len() {
            assert_eq!(one.row(i), two.row(i), "{name}: row {i}");
        }
        assert_eq!(one.sessions, two.sessions, "{name}");
        assert_eq!(one.summary(), two.summary(), "{name}");
        assert_eq!(screen(&mut one), screen(&mut two), "{name}");
    }
}
