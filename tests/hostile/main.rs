//! Hostile input: packets, capture files, names and the short fuzz pass.
//!
//! One test binary for the area (run it with `cargo test --test hostile`;
//! one module with `cargo test --test hostile MODULE::`).

#[path = "../program/mod.rs"]
mod program;

mod files;
mod fuzz_pass;
mod inputs;
mod names;
