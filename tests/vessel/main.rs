//! Vessel: findings, the Google protobuf fixtures and the simulator.
//!
//! One test binary for the area (run it with `cargo test --test vessel`;
//! one module with `cargo test --test vessel MODULE::`).

#[path = "../vessel_common/mod.rs"]
mod vessel_common;

mod findings;
mod google;
mod sim;
