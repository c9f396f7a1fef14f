//! Starstrike: golden vectors, findings, the simulator and its corpus.
//!
//! One test binary for the area (run it with `cargo test --test starstrike`;
//! one module with `cargo test --test starstrike MODULE::`).

mod findings;
mod golden;
mod sim;
