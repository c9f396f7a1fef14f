//! Programs the tests run beside lwarscope (tshark, mergecap, tmux, python3 with
//! DuckDB, GNU time, a C compiler): checked before they run, so a machine
//! without one fails in one line that names the README's install line, never
//! with an obscure "No such file or directory".
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The Debian package that brings `name`, as the README's install line names it.
fn package(name: &str) -> &'static str {
    match name {
        "tshark" | "mergecap" | "editcap" => "tshark",
        "tmux" => "tmux",
        "/usr/bin/time" => "time",
        "cc" => "build-essential",
        "python3" => "python3-pip, then `python3 -m pip install duckdb`",
        "kill" => "procps",
        _ => "the package that has it",
    }
}

fn on_path(name: &str) -> bool {
    if name.contains('/') {
        return Path::new(name).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// A command running `name`, which must be installed.
pub fn program(name: &str) -> Command {
    assert!(
        on_path(name),
        "`{name}` is not installed: run the README's install line (it installs {})",
        package(name)
    );
    Command::new(name)
}
