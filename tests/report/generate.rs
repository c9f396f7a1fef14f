//! `lwarscope --generate man|bash|zsh|fish|elvish|powershell`: the man page
//! and the shells' completions, generated from the command line's own
//! definition (clap_mangen, clap_complete), as docs/cli.md installs them.

use crate::common;

use common::lwarscope;

fn generate(kind: &str) -> String {
    let out = lwarscope().args(["--generate", kind]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{kind}");
    assert!(out.stderr.is_empty(), "{kind}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_man_page_is_roff_with_every_option() {
    let man = generate("man");
    let head: Vec<&str> = man.lines().take(5).collect();
    assert_eq!(
        head,
        [
            r".ie \n(.g .ds Aq \(aq",
            r".el .ds Aq '",
            &format!(
                r#".TH lwarscope 1  "lwarscope {}" "#,
                env!("CARGO_PKG_VERSION")
            ),
            ".SH NAME",
            r"lwarscope \- Analyse UDP game traffic (lwar, Starstrike, Battlegrounds) from capture files or a live interface",
        ]
    );
    for section in [
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
    ] {
        assert!(man.lines().any(|l| l == section), "{section}");
    }
    // Options of every part of the command line, the subcommands, the
    // examples of --help; not the hidden --generate itself.
    for option in [
        r"\fB\-Y\fR, \fB\-\-display\-filter\fR",
        r"\fB\-r\fR, \fB\-\-read\fR",
        r"\fB\-d\fR, \fB\-\-decode\-as\fR",
        r"\fB\-n\fR",
        r"\fB\-l\fR",
        r"lwarscope\-check(1)",
        r"lwarscope check captures/*.pcap \-\-deny malformed,violation,lost \-\-max resend\-rate=5%",
    ] {
        assert!(man.contains(option), "{option}");
    }
    assert!(!man.lines().any(|l| l.starts_with(r"\fB\-\-generate\fR")));
}

/// The bash script completes options, their values and subcommands (run in
/// bash, as the shell calls it).
#[test]
fn bash_completes_options_values_and_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("lwarscope.bash");
    std::fs::write(&script, generate("bash")).unwrap();
    let complete = |words: &[&str]| -> String {
        let line = format!(
            "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _lwarscope lwarscope '{}' '{}'; echo \"${{COMPREPLY[*]}}\"",
            script.display(),
            words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &line])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        complete(&["lwarscope", "--display-f"]),
        "--display-filter\n"
    );
    assert_eq!(complete(&["lwarscope", "-T", ""]), "fields json ek\n");
    assert_eq!(
        complete(&["lwarscope", "--format", ""]),
        "table json jsonl parquet\n"
    );
    assert_eq!(complete(&["lwarscope", "ch"]), "check\n");
    assert_eq!(complete(&["lwarscope", "check", "--jun"]), "--junit\n");
}

#[test]
fn every_shell_gets_its_script() {
    for (shell, first) in [
        ("zsh", "#compdef lwarscope"),
        (
            "fish",
            "# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.",
        ),
        ("elvish", ""),
        ("powershell", ""),
    ] {
        let script = generate(shell);
        assert_eq!(script.lines().next().unwrap(), first, "{shell}");
        assert!(script.contains("display-filter"), "{shell}");
        assert!(script.contains("check"), "{shell}");
    }
}

#[test]
fn help_says_how_to_get_them() {
    let out = lwarscope().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains(
            "\nMan page and shell completions: lwarscope --generate man|bash|zsh|fish (docs/cli.md).\n"
        ),
        "{help}"
    );
}

#[test]
fn an_unknown_kind_is_refused() {
    let out = lwarscope().args(["--generate", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: invalid value 'tcsh' for '--generate <KIND>'"),
        "{stderr}"
    );
}
