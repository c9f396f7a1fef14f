//! End to end in tmux: the TUI on a capture file, driven by keys, read back
//! with `capture-pane`; then the terminal must be as it was.
//!
//! tmux is required: without it these tests fail, they do not skip.
//!
//! No test leaves a lwarscope behind: the TUI writes its pid to a file as it
//! starts, and at teardown, once the tmux server is killed, that process must
//! be gone within a few seconds (or the test fails, after killing it).
//!
//! Nothing here sleeps for a set time and hopes: every step polls the screen
//! (or a file) until what it waits for is there, for up to [`WAIT`], which is
//! generous because the machine may be loaded (a busy CI runner, parallel
//! builds). A step that waits longer fails with the screen it saw.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server with one session running a plain shell.
struct Tmux {
    socket: String,
    /// Holds the pid file of the TUI started in the session.
    dir: tempfile::TempDir,
}

const PROMPT: &str = "READY$ ";

/// How long a step waits for the screen, at most: long enough for a loaded
/// machine, still finite.
const WAIT: Duration = Duration::from_secs(60);

impl Tmux {
    fn start(name: &str) -> Tmux {
        Tmux::start_sized(name, 100, 30)
    }

    fn start_sized(name: &str, width: u16, height: u16) -> Tmux {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.as_ref().is_ok_and(|o| o.status.success()),
            "tmux is required for this test (install it): {version:?}"
        );
        let t = Tmux {
            socket: format!("lwarscope-test-{}-{name}", std::process::id()),
            dir: tempfile::tempdir().expect("a temporary directory"),
        };
        let root = env!("CARGO_MANIFEST_DIR");
        t.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
            root,
            "env",
            "-i",
            "TERM=xterm-256color",
            &format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
            &format!("PS1={PROMPT}"),
            "sh",
        ]);
        t.wait_for(|s| s.contains(PROMPT.trim_end()), "the shell prompt");
        t
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("running tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sends key names (`Enter`, `Down`, `C-c`...).
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.cmd(&["send-keys", "-t", "t", k]);
        }
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "t"])
    }

    /// The screen with the lines the terminal wrapped joined again.
    fn joined(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-J", "-t", "t"])
    }

    /// The lines drawn in reverse video (the focused pane's selection), as text.
    fn selected(&self) -> Vec<String> {
        self.cmd(&["capture-pane", "-p", "-e", "-t", "t"])
            .lines()
            .filter_map(|l| {
                let (text, reversed) = strip_sgr(l);
                reversed.then_some(text)
            })
            .collect()
    }

    fn alternate_on(&self) -> bool {
        self.cmd(&["display-message", "-p", "-t", "t", "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// Waits (up to [`WAIT`]) until the screen satisfies `ok`.
    fn wait_for(&self, ok: impl Fn(&str) -> bool, what: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "waited for {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (up to [`WAIT`]) until `get` gives something.
    fn wait_until<T>(&self, mut get: impl FnMut() -> Option<T>, what: &str) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(v) = get() {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {what}; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn pid_file(&self) -> PathBuf {
        self.dir.path().join("tui.pid")
    }

    /// Runs lwarscope with `args` in the shell, its pid written to the pid file
    /// (`exec` keeps the pid of the `sh -c` that wrote it), then `EXIT=` and its
    /// exit status. `args` go inside `sh -c '...'`: quote in them with double
    /// quotes only.
    fn launch(&self, args: &str) {
        let bin = env!("CARGO_BIN_EXE_lwarscope");
        self.type_text(&format!(
            "sh -c 'echo $$ > {}; exec {bin} {args}'; echo EXIT=$?",
            self.pid_file().display()
        ));
        self.keys(&["Enter"]);
    }

    /// The pid of the TUI started by [`Tmux::launch`].
    fn tui_pid(&self) -> u32 {
        self.wait_until(
            || {
                std::fs::read_to_string(self.pid_file())
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            },
            "the pid file",
        )
    }

    /// Starts the TUI on the test capture and waits until it has loaded it.
    fn open_tui(&self) -> String {
        assert!(Path::new("captures/real-server-clean.pcap").exists());
        self.launch("-r captures/real-server-clean.pcap --tui");
        self.wait_for(
            |s| s.contains("loaded") && s.contains("2 Packets"),
            "the TUI",
        )
    }

    /// After the TUI ends: the shell is back, in its normal screen, in cooked
    /// mode with echo.
    fn assert_restored(&self, exit: &str) {
        // The command line holds `EXIT=$?` too (at the start of a line when a
        // long path wraps it): wait for the line the shell prints, a number.
        let printed = |l: &str| {
            l.strip_prefix("EXIT=")
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        };
        let s = self.wait_for(|s| s.lines().any(printed), "the TUI to end");
        assert!(s.contains(&format!("EXIT={exit}")), "{s}");
        assert!(!self.alternate_on(), "still in the alternate screen:\n{s}");
        assert!(!s.contains("2 Packets"), "the TUI is still on screen:\n{s}");
        // The marker is computed, so that the echoed command line does not match.
        self.type_text(
            "stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo -e -icanon -e -echo; echo STTY-$((6*7))",
        );
        self.keys(&["Enter"]);
        let s = self.wait_for(|s| s.contains("STTY-42"), "stty");
        let tail = s.rsplit("STTY-$((6*7))").next().unwrap_or_default();
        assert!(
            tail.lines().any(|l| l.trim() == "icanon") && tail.lines().any(|l| l.trim() == "echo"),
            "the terminal is left in raw mode:\n{s}"
        );
    }
}

impl Drop for Tmux {
    /// Kills the tmux server, then checks that the TUI it ran has exited.
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
        let Some(pid) = std::fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            return;
        };
        if !wait_gone(pid, Duration::from_secs(10)) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            // A second panic while unwinding would abort the whole run.
            if !std::thread::panicking() {
                panic!("lwarscope (pid {pid}) still runs after its tmux session was killed");
            }
        }
    }
}

/// True when the process has exited (or is a zombie nobody reaps) before `limit`.
fn wait_gone(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn alive(pid: u32) -> bool {
    // The state is the field after the command name, which is in parentheses.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let state = s.rsplit_once(')')?.1.split_whitespace().next()?;
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

/// A line without its SGR escapes, and whether one of them set reverse video.
fn strip_sgr(line: &str) -> (String, bool) {
    let mut text = String::new();
    let mut reversed = false;
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        text.push_str(&rest[..at]);
        let seq = &rest[at + 2..];
        let end = seq
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(seq.len());
        if seq[end..].starts_with('m') && seq[..end].split(';').any(|p| p == "7") {
            reversed = true;
        }
        rest = seq.get(end + 1..).unwrap_or_default();
    }
    text.push_str(rest);
    (text, reversed)
}

/// The line of the screen that holds `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{screen}"))
}

#[test]
fn browse_a_capture_open_filter_jump_and_quit() {
    let t = Tmux::start("browse");
    let s = t.open_tui();
    assert!(t.alternate_on(), "the TUI runs in the alternate screen");
    assert!(s.contains("1 Sessions") && s.contains("[::1]:38379"), "{s}");
    assert!(line_with(&s, "     1 ").contains("Connect#1"), "{s}");

    // Move down twice and open the packet: the detail shows frame 3, an Input.
    t.keys(&["Down", "j", "Enter"]);
    let s = t.wait_for(|s| s.contains("Detail━ frame 3"), "frame 3 opened");
    assert!(s.contains("▾ Input"), "{s}");
    assert!(s.contains("frameNo"), "{s}");

    // Filter on Chat; as typed, a bad word is flagged before Enter.
    t.type_text("/Chat &&");
    t.wait_for(
        |s| s.contains("/Chat &&") && s.contains("[error]"),
        "the error",
    );
    t.keys(&["BSpace", "BSpace", "BSpace"]);
    t.wait_for(|s| s.contains("[ok]"), "the filter accepted");
    t.keys(&["Enter"]);
    // Every packet listed carries a Chat.
    t.wait_for(
        |s| {
            let rows: Vec<&str> = s.lines().filter(|l| l.contains(" ack=")).collect();
            s.contains("/Chat/") && !rows.is_empty() && rows.iter().all(|l| l.contains("Chat#"))
        },
        "the filter applied",
    );

    // The filter keeps findings too: those of Chat packets (none here).
    t.keys(&["5"]);
    t.wait_for(
        |s| s.contains("findings kept") && s.contains("| kept "),
        "the findings filtered",
    );
    // Go to a frame the filter hides: the view widens.
    t.type_text(":7");
    t.keys(&["Enter"]);
    let s = t.wait_for(
        |s| s.contains("Detail─ frame 7 ") || s.contains("view widened"),
        "frame 7",
    );
    assert!(
        s.contains("view widened to all packets to show frame 7"),
        "{s}"
    );

    jump_to_the_last_finding_and_back(&t);

    // Help lists the keys; any key closes it.
    t.keys(&["?"]);
    t.wait_for(
        |s| s.contains("Keys") && s.contains("follow new packets"),
        "help",
    );
    t.keys(&["Escape"]);
    t.wait_for(|s| !s.contains("follow new packets"), "help closed");

    t.keys(&["q"]);
    t.assert_restored("0");
    // One line sums it up on the terminal, as tshark prints its count.
    assert_eq!(
        summary_line(&t.joined()),
        "lwarscope: 525 frames, 525 game packets, 2 sessions, 2 errors, 0 warnings, 3 notes"
    );
}

/// From the findings by time, the last one: Enter shows its packet, whose
/// detail lists it; Backspace comes back to it.
fn jump_to_the_last_finding_and_back(t: &Tmux) {
    // Jump from the last finding by time to its packet, and back.
    let finding = |l: &String| l.contains(" s2c ") || l.contains(" c2s ");
    t.keys(&["5", "s"]);
    let first = t.wait_until(
        || t.selected().into_iter().find(finding),
        "a finding selected",
    );
    t.keys(&["End"]);
    let last_line = t.wait_until(
        || t.selected().into_iter().find(|l| finding(l) && *l != first),
        "the last finding selected",
    );
    let mut words = last_line
        .trim_start_matches(['│', '┃', ' '])
        .split_whitespace();
    let (last, label) = (
        words.next().unwrap().to_owned(),
        words.nth(1).unwrap().to_owned(),
    );
    t.keys(&["Enter"]);
    t.wait_for(
        |s| s.contains(&format!("Detail─ frame {last} ")),
        "the finding's packet",
    );
    // The end of its tree lists its findings, the one we came from among them.
    t.keys(&["3", "End"]);
    let s = t.wait_for(|s| s.contains("Findings:"), "the detail's findings");
    assert!(s.contains(&label), "{label} not in the detail:\n{s}");
    // Backspace: back to the finding.
    t.keys(&["BSpace"]);
    t.wait_until(
        || t.selected().into_iter().find(|l| *l == last_line),
        "back on the finding",
    );
}

#[test]
fn ctrl_c_restores_the_terminal() {
    let t = Tmux::start("ctrlc");
    t.open_tui();
    t.keys(&["C-c"]);
    t.assert_restored("0");
}

#[test]
fn sigterm_restores_the_terminal() {
    let t = Tmux::start("term");
    t.open_tui();
    let pid = t.tui_pid().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    t.assert_restored("0");
}

#[test]
fn the_layout_follows_a_resize() {
    let t = Tmux::start("resize");
    t.open_tui();
    t.cmd(&["resize-window", "-t", "t", "-x", "80", "-y", "24"]);
    // The strip on the first line, the sessions pane's border below it.
    let s = t.wait_for(
        |s| {
            s.lines()
                .nth(1)
                .is_some_and(|l| l.chars().count() == 80 && l.ends_with('┐'))
        },
        "a redraw at 80 columns",
    );
    assert!(s.starts_with(" 2 errors: violation 2"), "{s}");
    assert!(s.contains("? help"), "{s}");
    t.cmd(&["resize-window", "-t", "t", "-x", "160", "-y", "48"]);
    t.wait_for(
        |s| s.contains("5 Findings") && s.contains("3 Detail"),
        "the wide layout",
    );
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// The simulator's peers on loopback, the TUI capturing `lo` (needs root, as
/// live capture does): sessions, their rates and the capture counters appear.
#[test]
fn live_on_loopback_shows_sessions_and_rates() {
    let t = Tmux::start_sized("live", 160, 48);
    let bin = env!("CARGO_BIN_EXE_lwarscope");
    t.launch("-i lo --tui");
    t.wait_for(
        |s| s.contains("live lo") && s.contains("FOLLOW"),
        "the live TUI",
    );
    // Clients and a server on an unusual port, so that other loopback traffic
    // cannot be mistaken for them.
    let mut sim = Command::new(bin)
        .args(["sim", "--live", "-c", "3", "-d", "6", "--seed", "7"])
        .args(["--server", "127.0.0.1:42817"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting the simulator");
    let mut clients = Command::new(bin)
        .args(["sim", "--live", "-c", "3", "-d", "5", "--seed", "7"])
        .args(["--connect", "127.0.0.1:42817"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting the simulated clients");
    // Three sessions with that server, playing, with packets flowing both ways.
    let s = t.wait_for(
        |s| {
            let rows: Vec<&str> = s
                .lines()
                .filter(|l| l.contains("127.0.0.1:42817") && l.contains(" playing "))
                .collect();
            // libpcap's counters reach the status bar once a second: waited
            // for too, then asserted below.
            rows.len() >= 3
                && s.contains("rx ")
                && rows.iter().all(|l| {
                    l.split_whitespace()
                        .find(|w| {
                            w.contains('/') && w.chars().all(|c| c.is_ascii_digit() || c == '/')
                        })
                        .is_some_and(|rate| rate.split('/').all(|n| n != "0"))
                })
        },
        "three playing sessions with live rates",
    );
    assert!(s.contains("rx "), "libpcap's counters are shown:\n{s}");
    assert!(
        s.chars().any(|c| ('▁'..='█').contains(&c)),
        "a traffic sparkline:\n{s}"
    );
    let _ = clients.wait();
    let _ = sim.wait();
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// Closing the terminal under the TUI (killing its tmux session) ends it: it
/// must not linger, spinning on a terminal that is gone.
#[test]
fn the_tui_exits_when_its_terminal_is_killed() {
    for (name, args, ready) in [
        (
            "hangup-file",
            "-r captures/real-server-clean.pcap --tui",
            "loaded",
        ),
        ("hangup-live", "-i lo --tui", "FOLLOW"),
    ] {
        let t = Tmux::start(name);
        t.launch(args);
        t.wait_for(|s| s.contains(ready), "the TUI");
        let pid = t.tui_pid();
        assert!(alive(pid), "the TUI runs");
        t.cmd(&["kill-session", "-t", "t"]);
        let gone = wait_gone(pid, Duration::from_secs(10));
        if !gone {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert!(
            gone,
            "{name}: lwarscope still runs after its terminal was killed"
        );
    }
}

/// Errors and warnings as the strip on the first line counts them.
fn strip_counts(screen: &str) -> (u64, u64) {
    let top = screen.lines().next().unwrap_or_default();
    if top.contains("no errors, no warnings") {
        return (0, 0);
    }
    (count_before(top, " error"), count_before(top, " warning"))
}

/// The number just before `word` in `line` (0 when `word` is not there).
fn count_before(line: &str, word: &str) -> u64 {
    line.find(word)
        .and_then(|at| line[..at].rsplit([' ', ',']).next()?.parse().ok())
        .unwrap_or(0)
}

/// The summary line printed on quit.
fn summary_line(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("lwarscope: "))
        .unwrap_or_else(|| panic!("no summary line in:\n{screen}"))
        .trim_end()
        .to_owned()
}

/// The text of the screen before the first note's name.
fn before_notes(screen: &str) -> &str {
    let notes = ["repeat", "input-gap", "duplicate", " note ", "not-captured"];
    let at = notes.iter().filter_map(|n| screen.find(n)).min();
    &screen[..at.unwrap_or(screen.len())]
}

/// The must-hold: on a capture with malformed packets, losses and
/// repeats, the first screen names the errors before any note, at 160x45 and
/// at 80x24; and at 80x24 each client keeps its full address and port.
#[test]
fn the_first_screen_names_the_errors_before_any_note() {
    for (w, h) in [(160, 45), (80, 24)] {
        let t = Tmux::start_sized(&format!("first-{w}"), w, h);
        t.launch("-r captures/sim-corrupt.pcap --tui");
        let s = t.wait_for(|s| s.contains("loaded"), "the TUI");
        let head = before_notes(&s);
        assert!(head.contains("55 errors: malformed 41"), "{w}x{h}:\n{s}");
        assert!(s.contains("▸ error   malformed ×41"), "{w}x{h}:\n{s}");
        for client in ["127.0.0.2:50001", "127.0.0.3:50002"] {
            assert!(s.contains(client), "{w}x{h}: {client}\n{s}");
        }
        // `!` opens the worst kind; Enter on its first incident shows the packet.
        t.keys(&["!"]);
        t.wait_for(|s| s.contains("▾ error   malformed"), "the worst opened");
        t.keys(&["Down", "Enter"]);
        let s = t.wait_for(
            |s| s.contains("Detail─ frame 8 "),
            "the first malformed packet",
        );
        assert!(s.contains("undecodable"), "{s}");
        t.keys(&["q"]);
        t.assert_restored("0");
        assert_eq!(
            summary_line(&t.joined()),
            "lwarscope: 1278 frames, 1251 game packets, 3 sessions, 55 errors, 8 warnings, 76 notes"
        );
    }
}

/// A capture of each protocol, and a client of it as the sessions pane shows
/// it once read from the file.
const PROTOCOLS: [(&str, &str, u16); 5] = [
    ("sim-corrupt", "127.0.0.2:50001", 32422),
    ("strs-corrupt", "10.0.1.1:50000", 7777),
    ("bg-corrupt", "10.0.1.1:40000", 7777),
    ("vessel-faults", "10.7.0.1:41000", 39461),
    ("ksy-timewarp-faults", "10.0.3.1:41000", 7711),
];

/// What every first screen must show: the strip's counts, the findings pane
/// with the worst kind first, the errors named before any note.
fn check_first_screen(s: &str, what: &str) -> (u64, u64) {
    let (errors, warnings) = strip_counts(s);
    let worst = if errors > 0 {
        Some("error")
    } else if warnings > 0 {
        Some("warning")
    } else {
        None
    };
    // The findings pane is on the first screen, its worst kind first.
    let first = s
        .lines()
        .find_map(|l| l.split_once("▸ ").map(|x| x.1))
        .unwrap_or_else(|| panic!("{what}: no findings on the first screen\n{s}"));
    if let Some(worst) = worst {
        assert!(first.starts_with(worst), "{what}: {first}\n{s}");
    }
    let head = before_notes(s);
    if errors > 0 {
        assert!(head.contains(" error"), "{what}: errors named first\n{s}");
    }
    (errors, warnings)
}

/// Once quit, the summary counts what the strip counted; returns it.
fn check_summary(t: &Tmux, (errors, warnings): (u64, u64), what: &str) -> String {
    t.keys(&["q"]);
    t.assert_restored("0");
    let line = summary_line(&t.joined());
    let plural = |n: u64, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    assert!(line.contains(&plural(errors, "error")), "{what}: {line}");
    assert!(
        line.contains(&plural(warnings, "warning")),
        "{what}: {line}"
    );
    line
}

#[test]
fn every_protocol_from_a_file_at_80x24_and_160x45() {
    for (name, client, _) in PROTOCOLS {
        for (w, h) in [(80, 24), (160, 45)] {
            let what = format!("{name} at {w}x{h}");
            let t = Tmux::start_sized(&format!("file-{name}-{w}"), w, h);
            t.launch(&format!("-r captures/{name}.pcap --tui"));
            let s = t.wait_for(|s| s.contains("loaded") && s.contains(client), &what);
            let counts = check_first_screen(&s, &what);
            assert!(counts.0 + counts.1 > 0, "{what}: a faulty capture\n{s}");
            // Go to the first frame and open it: the detail decodes it.
            t.type_text(":1");
            t.keys(&["Enter", "Enter"]);
            t.wait_for(|s| s.contains("Detail━ frame "), "the detail");
            check_summary(&t, counts, &what);
        }
    }
}

/// Each protocol's capture replayed on loopback while two TUIs capture it
/// live, at 80x24 and at 160x45 (needs root, as live capture does).
#[test]
fn every_protocol_live_at_80x24_and_160x45() {
    use lwarscope::proto::replay::{Pace, ReplayConfig, run_replay};
    for (name, _, port) in PROTOCOLS {
        let terms: Vec<Tmux> = [(80, 24), (160, 45)]
            .into_iter()
            .map(|(w, h)| {
                let t = Tmux::start_sized(&format!("live-{name}-{w}"), w, h);
                // Recording too (-w): the summary says where.
                let save = t.dir.path().join("live.pcap");
                t.launch(&format!(
                    "-i lo -f \"udp port {port}\" -w {} --tui",
                    save.display()
                ));
                t
            })
            .collect();
        for t in &terms {
            t.wait_for(
                |s| s.contains("live lo") && s.contains("FOLLOW"),
                "the live TUI",
            );
        }
        let stats = run_replay(&ReplayConfig {
            file: format!("captures/{name}.pcap").into(),
            pace: Pace::Pps(4000),
            keep: |_| true,
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(stats.sent > 20, "{name}: {stats}");
        for t in &terms {
            // Every packet in, the findings settled: two screens alike, a
            // second apart, with sessions and findings on them.
            let mut last = String::new();
            let s = t.wait_until(
                || {
                    std::thread::sleep(Duration::from_millis(1000));
                    let s = strip_rates(&t.screen());
                    let same = s == last && s.contains("127.0.0.1:");
                    last = s.clone();
                    same.then_some(s)
                },
                &format!("{name}: the live capture to settle"),
            );
            let counts = check_first_screen(&s, name);
            assert!(counts.0 + counts.1 > 0, "{name}: faults seen live\n{s}");
            let line = check_summary(t, counts, name);
            let save = t.dir.path().join("live.pcap");
            let written = format!("; frames written to {}", save.display());
            assert!(line.ends_with(&written), "{name}: {line}\n{}", t.joined());
            assert!(
                std::fs::metadata(&save).is_ok_and(|m| m.len() > 24),
                "{name}"
            );
        }
    }
}

/// A screen without what changes by itself every second (rates, sparklines).
fn strip_rates(screen: &str) -> String {
    screen
        .lines()
        .filter(|l| !l.contains("pkt/s") && !l.chars().any(|c| ('▁'..='█').contains(&c)))
        .collect::<Vec<_>>()
        .join("\n")
}
