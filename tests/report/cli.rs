//! The binary as a user runs it: the commands of the README and of `docs/` (with
//! their output), pipes closed early, a missing file, a bad display filter,
//! colour and help.

use crate::common;

use assert_cmd::Command;
use common::lwarscope;
use std::path::Path;
use std::process::Stdio;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a shell command line from the repository root, with `lwarscope` on the
/// PATH; returns stdout, stderr and the exit code of the pipeline.
fn shell(line: &str) -> (String, String, Option<i32>) {
    shell_with("sh", line)
}

fn shell_with(shell: &str, line: &str) -> (String, String, Option<i32>) {
    let bin = assert_cmd::cargo::cargo_bin("lwarscope");
    let dir = bin.parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new(shell)
        .arg("-c")
        .arg(line)
        .current_dir(root())
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("sh runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn trimmed(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim_end_matches('\n').to_owned()
}

/// The pages whose `console` blocks are run: the README, every page of
/// `docs/` and the performance notebook.
fn pages() -> Vec<std::path::PathBuf> {
    let mut out = vec![root().join("README.md"), root().join("benches/NOTEBOOK.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The `console` blocks of a page: each `$ command` and the output below it.
fn console_commands(page: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_block = false;
    // A command continued on the next line (ending in `\`), as a shell reads it.
    let mut continued = false;
    for line in text.lines() {
        if line.starts_with("```console") {
            in_block = true;
        } else if line.starts_with("```") {
            in_block = false;
        } else if in_block {
            if continued && let Some((cmd, _)) = out.last_mut() {
                cmd.push('\n');
                cmd.push_str(line);
                continued = line.ends_with('\\');
            } else if let Some(cmd) = line.strip_prefix("$ ") {
                out.push((cmd.to_owned(), String::new()));
                continued = cmd.ends_with('\\');
            } else if let Some((_, expected)) = out.last_mut() {
                expected.push_str(line);
                expected.push('\n');
            }
        }
    }
    out
}

#[test]
fn the_readme_commands_print_what_the_readme_shows() {
    let readme = console_commands(&root().join("README.md"));
    assert!(readme.len() >= 3, "the README has a tour: {readme:?}");
    let mut ran = 0;
    let mut wrong = Vec::new();
    for page in pages() {
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (cmd, expected) in console_commands(&page) {
            let (stdout, stderr, _) = shell(&cmd);
            assert!(!stderr.contains("panicked"), "{name}: {cmd}: {stderr}");
            if trimmed(&stdout) != trimmed(&expected) {
                wrong.push(format!(
                    "{name}: {cmd}\n--- shown\n{}\n--- printed\n{}",
                    trimmed(&expected),
                    trimmed(&stdout)
                ));
            }
            ran += 1;
        }
    }
    assert!(ran >= 15, "the guide's commands: {ran}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_closed_pipe_is_a_normal_end() {
    for args in [
        "--packets",
        "-V",
        "-x",
        "--format jsonl",
        "--format json --packets",
    ] {
        let line = format!(
            "lwarscope -r captures/sim-eight.pcap captures/sim-eight.pcap {args} | head -2"
        );
        let (stdout, stderr, code) = shell(&line);
        assert_eq!(stdout.lines().count(), 2, "{args}: {stdout}");
        assert_eq!(stderr, "", "{args}: no panic, no error");
        assert_eq!(code, Some(0), "{args}");
    }
    // The status of lwarscope itself, not of head (bash: pipefail).
    let (_, stderr, code) = shell_with(
        "bash",
        "set -o pipefail; lwarscope -r captures/sim-eight.pcap --packets | head -1 >/dev/null",
    );
    assert_eq!(stderr, "");
    assert_eq!(code, Some(0), "lwarscope exits 0 when its reader goes away");
}

#[test]
fn a_missing_file_is_one_error_line_and_exit_2() {
    let out = lwarscope()
        .args(["-r", "captures/no-such.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr, "error: captures/no-such.pcap: no such file\n",
        "one line"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_bad_filter_points_at_its_column() {
    let out = lwarscope()
        .args(["-r", "captures/sim-clean.pcap", "-Y", "Join && (seqno > 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "error: bad display filter: column 19: missing `)` to close the `(` of column 9\n  \
         Join && (seqno > 3\n                    ^\n"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is printed before the filter is checked"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = lwarscope()
        .args(["-r", "captures/sim-corrupt.pcap"])
        .output()
        .unwrap();
    assert!(!plain.stdout.contains(&0x1b), "no colour in a pipe");
    let always = lwarscope()
        .args(["-r", "captures/sim-corrupt.pcap", "--color", "always"])
        .output()
        .unwrap();
    assert!(always.stdout.contains(&0x1b), "--color always colours");
    let packets = lwarscope()
        .args(["-r", "captures/sim-corrupt.pcap", "-Y", "malformed"])
        .args(["--color", "always"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&packets.stdout);
    assert!(text.contains("\x1b[31mmalformed\x1b[0m"), "{text}");
    let never = lwarscope()
        .args(["-r", "captures/sim-corrupt.pcap", "--color", "never"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!never.stdout.contains(&0x1b));
}

#[test]
fn help_explains_every_option_with_examples() {
    let out = lwarscope().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for text in [
        "--packets",
        "--verbose",
        "--hex",
        "--display-filter",
        "--format",
        "--color",
        "check",
        "lwarscope -r match.pcap --packets",
        "Display filter (-Y)",
        "Example: lwarscope -r game.pcap --format jsonl",
        "--jobs",
        "--out",
        "lwarscope -r captures/ --format parquet --out tables/",
    ] {
        assert!(help.contains(text), "--help lacks {text}");
    }
    let out = lwarscope().args(["check", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for text in [
        "--deny",
        "--max",
        "--min",
        "--rules",
        "--expect",
        "--junit",
        "Exit status: 0 every file passes, 1 a rule failed, 2 an error",
        "lwarscope check captures/*.pcap --deny malformed,violation,lost",
        "--jobs",
        "lwarscope check captures/ -j 8",
    ] {
        assert!(help.contains(text), "check --help lacks {text}");
    }
    let version = lwarscope().arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lwarscope "));
}

#[test]
fn several_files_and_json_documents_parse() {
    let out = lwarscope()
        .args(["-r", "captures/sim-clean.pcap", "captures/sim-ipv6.pcap"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], 2);
    assert_eq!(doc["capture"]["files"].as_array().unwrap().len(), 2);
    assert_eq!(doc["summary"]["sessions"].as_array().unwrap().len(), 4);
}

#[test]
fn a_filter_nested_ten_thousand_deep_is_an_error_not_a_crash() {
    for expr in ["(".repeat(10_000), "!".repeat(60_000)] {
        let out = lwarscope()
            .args(["-r", "captures/sim-clean.pcap", "-Y", &expr])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(
                "error: bad display filter: column 65: `(` and `!` nest more than 64 deep"
            ),
            "{}",
            &stderr[..stderr.len().min(200)]
        );
    }
}

#[test]
fn the_json_summary_carries_what_the_tables_show() {
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .args(["-r", "captures/sim-loss.pcap", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["session_count"], 3);
    let s = &summary["sessions"][0];
    // The sessions table: `0  127.0.0.2:50001 -> 127.0.0.1:32422  1:1
    // player1-1  closed  7.4 s  202/109  7117/9294  9.9%/4.5%`.
    assert_eq!(s["session"], 0);
    assert_eq!(s["protocol"], "lwar");
    assert_eq!(s["player"]["name"], "player1-1");
    assert_eq!(s["state"], "closed");
    assert_eq!(
        format!("{:.1}", s["duration_secs"].as_f64().unwrap()),
        "7.4"
    );
    assert!(s["end"].as_f64().unwrap() > s["start"].as_f64().unwrap());
    let pct = |v: &serde_json::Value| format!("{:.1}%", v.as_f64().unwrap() * 100.0);
    assert_eq!(pct(&s["c2s"]["loss_rate"]), "9.9%");
    assert_eq!(pct(&s["s2c"]["loss_rate"]), "4.5%");
    // The directions table: `0 s2c ... 2.0/99.3 ms  unacked 1`.
    let ack = &s["s2c"]["ack_delay"];
    assert_eq!(format!("{:.1}", ack["p50_ms"].as_f64().unwrap()), "2.0");
    assert_eq!(format!("{:.1}", ack["p95_ms"].as_f64().unwrap()), "99.3");
    assert!(ack["max_ms"].as_f64().unwrap() >= ack["p95_ms"].as_f64().unwrap());
    assert!(ack["samples"].as_u64().unwrap() > 10);
    assert_eq!(s["s2c"]["unacked"], 1);
    // Every map is there in every direction, empty or not.
    for session in summary["sessions"].as_array().unwrap() {
        for dir in ["c2s", "s2c"] {
            for key in ["messages", "findings", "violations", "malformed"] {
                assert!(session[dir][key].is_object(), "{dir}.{key}");
            }
        }
    }
    for key in ["messages", "findings", "violations", "malformed"] {
        assert!(summary[key].is_object(), "{key}");
    }
    // The messages table: Input, 572, ~30 Hz by the specification.
    let rates = summary["message_rates"].as_array().unwrap();
    let input = rates.iter().find(|r| r["type"] == "Input").unwrap();
    assert_eq!(input["count"], 572);
    assert_eq!(input["spec_hz"], 30.0);
    assert!(input["observed_hz"].as_f64().unwrap() > 20.0);
}

#[test]
fn verbose_json_carries_each_message_s_typed_fields() {
    let run = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = Command::cargo_bin("lwarscope")
            .unwrap()
            .current_dir(root())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let file = "captures/sim-loss.pcap";
    let plain = run(&["-r", file, "--format", "jsonl", "-Y", "frame == 2"]);
    assert!(plain[0]["messages"][0].get("fields").is_none());
    let verbose = run(&["-r", file, "--format", "jsonl", "-V", "-Y", "frame == 2"]);
    // Frame 2: Join#1 player=1:1 name="player1", Synced#2, Add#3.
    let join = &verbose[0]["messages"][0];
    assert_eq!(join["type"], "Join");
    let fields = join["fields"].as_array().unwrap();
    let value = |name: &str| {
        fields
            .iter()
            .find(|f| f["field"] == name)
            .unwrap_or_else(|| panic!("{name} in {fields:?}"))
            .clone()
    };
    assert_eq!(value("lwar.type")["value"], 3);
    assert_eq!(value("lwar.type")["name"], "Join");
    assert_eq!(value("lwar.seqno")["value"], 1);
    assert_eq!(value("lwar.player")["value"], "1:1");
    assert_eq!(value("lwar.name")["value"], "player1");
    // Each message has its own fields only.
    let synced = verbose[0]["messages"][1]["fields"].as_array().unwrap();
    assert!(synced.iter().all(|f| f["field"] != "lwar.name"));
    // In the json document too, which then lists the packets.
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .current_dir(root())
        .args(["-r", file, "--format", "json", "-V", "-Y", "frame == 2"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["packets"][0]["messages"][0]["fields"], join["fields"]);
}

/// Every line of a report at `columns`, piped (the width from `COLUMNS`).
fn report_at(capture: &str, columns: u16) -> String {
    let out = lwarscope()
        .args(["-r", capture, "--color", "never"])
        .env("COLUMNS", columns.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{capture}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_report_fits_80_columns_without_breaking_words_or_numbers() {
    let mut captures: Vec<_> = std::fs::read_dir(root().join("captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    captures.sort();
    assert!(captures.len() > 20);
    let unit_alone = regex::Regex::new(r"[┆│] *(ms|Hz|s|%) *[┆│]").unwrap();
    for path in &captures {
        let capture = path.to_str().unwrap();
        for (columns, words) in [
            (
                80,
                &[
                    "player", "duration", "packets", "rpts", "rsnd", "reord", "malf", "p50/95",
                    "unack",
                ][..],
            ),
            (
                120,
                &[
                    "player",
                    "duration",
                    "repeats",
                    "resends",
                    "reorders",
                    "malformed",
                    "p50/p95",
                    "unacked",
                ][..],
            ),
        ] {
            let text = report_at(capture, columns);
            for line in text.lines() {
                assert!(
                    line.chars().count() <= usize::from(columns),
                    "{capture} at {columns}: {line}"
                );
                assert!(!unit_alone.is_match(line), "{capture} at {columns}: {line}");
            }
            if text.contains("unack") {
                for w in words {
                    assert!(
                        text.contains(w),
                        "{capture} at {columns}: heading {w} broken"
                    );
                }
            }
        }
    }
    // Piped, the width is COLUMNS': narrow folds the player under the addresses.
    let narrow = report_at("captures/sim-loss.pcap", 80);
    let wide = report_at("captures/sim-loss.pcap", 120);
    assert!(narrow.contains("│   ┆ 1:1 player1-1      ┆"), "{narrow}");
    assert!(wide.contains("┆ 1:1 player1-1 ┆"), "{wide}");
}
