//! Outputs and the command line: the report, check, JSON, packets, fields, stats,
//! Parquet, plots, fleets, tshark habits, and the documentation's commands.
//!
//! One test binary for the area (run it with `cargo test --test report`;
//! one module with `cargo test --test report MODULE::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../program/mod.rs"]
mod program;

mod check;
mod cli;
mod details;
mod docs;
mod export;
mod fields;
mod fleet;
mod generate;
mod outputs;
mod parquet;
mod plot;
mod scope;
mod skipped;
mod stats;
mod tshark;
mod window;
