//! End to end in tmux: the TUI on a capture file, driven by keys, read back
//! with `capture-pane`; then the terminal must be as it was.
//!
//! tmux is required: without it these tests fail, they do not skip.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server with one session running a plain shell.
struct Tmux {
    socket: String,
}

const PROMPT: &str = "READY$ ";

impl Tmux {
    fn start(name: &str) -> Tmux {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.as_ref().is_ok_and(|o| o.status.success()),
            "tmux is required for this test (install it): {version:?}"
        );
        let t = Tmux {
            socket: format!("lwarscope-test-{}-{name}", std::process::id()),
        };
        let root = env!("CARGO_MANIFEST_DIR");
        t.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "100",
            "-y",
            "30",
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

    /// Waits (up to 20 s) until the screen satisfies `ok`.
    fn wait_for(&self, ok: impl Fn(&str) -> bool, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "waited for {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (up to 20 s) until `get` gives something.
    fn wait_until<T>(&self, get: impl Fn() -> Option<T>, what: &str) -> T {
        let deadline = Instant::now() + Duration::from_secs(20);
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

    /// Starts the TUI on the test capture and waits until it has loaded it.
    fn open_tui(&self) -> String {
        let bin = env!("CARGO_BIN_EXE_lwarscope");
        assert!(Path::new("captures/real-server-clean.pcap").exists());
        self.type_text(&format!(
            "{bin} -r captures/real-server-clean.pcap --tui; echo EXIT=$?"
        ));
        self.keys(&["Enter"]);
        self.wait_for(
            |s| s.contains("loaded") && s.contains("2 Packets"),
            "the TUI",
        )
    }

    /// After the TUI ends: the shell is back, in its normal screen, in cooked
    /// mode with echo.
    fn assert_restored(&self, exit: &str) {
        // The command line holds `EXIT=$?` too: wait for the line the shell prints.
        let s = self.wait_for(
            |s| s.lines().any(|l| l.starts_with("EXIT=")),
            "the TUI to end",
        );
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
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
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

    // Jump from the last finding to its packet: the view widens if needed.
    let finding = |l: &String| l.contains(" s2c ") || l.contains(" c2s ");
    t.keys(&["5"]);
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
    let s = t.wait_for(
        |s| s.contains(&format!("Detail─ frame {last} ")),
        "the finding's packet",
    );
    assert!(s.contains("view widened"), "the filter hid it:\n{s}");
    // The end of its tree lists its findings, the one we came from among them.
    t.keys(&["3", "End"]);
    let s = t.wait_for(|s| s.contains("Findings:"), "the detail's findings");
    assert!(s.contains(&label), "{label} not in the detail:\n{s}");

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
    let shell = t.cmd(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
    let out = Command::new("pgrep")
        .args(["-P", shell.trim(), "lwarscope"])
        .output()
        .expect("pgrep");
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(!pid.is_empty(), "the TUI's process was not found");
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    t.assert_restored("0");
}

#[test]
fn the_layout_follows_a_resize() {
    let t = Tmux::start("resize");
    t.open_tui();
    t.cmd(&["resize-window", "-t", "t", "-x", "80", "-y", "24"]);
    let s = t.wait_for(
        |s| {
            s.lines()
                .next()
                .is_some_and(|l| l.chars().count() == 80 && l.ends_with('┐'))
        },
        "a redraw at 80 columns",
    );
    assert!(s.contains("? help"), "{s}");
    t.cmd(&["resize-window", "-t", "t", "-x", "160", "-y", "48"]);
    t.wait_for(
        |s| s.contains("5 Findings") && s.contains("3 Detail"),
        "the wide layout",
    );
    t.keys(&["q"]);
    t.assert_restored("0");
}
