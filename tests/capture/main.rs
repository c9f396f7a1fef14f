//! Capture front end: files, live interfaces, readers, snap lengths, stalled and
//! hostile inputs' plumbing.
//!
//! One test binary for the area (run it with `cargo test --test capture`;
//! one module with `cargo test --test capture MODULE::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../program/mod.rs"]
mod program;

mod cli;
mod files;
mod inputs;
mod live;
mod readers;
mod sim_live;
mod snaplen_cut;
mod stalled_input;
