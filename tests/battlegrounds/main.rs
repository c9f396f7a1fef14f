//! Battlegrounds: golden vectors, recognition, findings, fragments, the reference
//! implementation's traffic, the simulator and its corpus.
//!
//! One test binary for the area (run it with `cargo test --test battlegrounds`;
//! one module with `cargo test --test battlegrounds MODULE::`).

mod close;
mod corpus;
mod findings;
mod fragments;
mod golden;
mod metrics;
mod recognition;
mod reference;
mod sim;
mod tap_miss;
