//! lwar: the wire module's golden vectors and properties, the analyzer's findings,
//! real-server traffic, the simulator and its corpus.
//!
//! One test binary for the area (run it with `cargo test --test lwar`;
//! one module with `cargo test --test lwar MODULE::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../program/mod.rs"]
mod program;

mod corpus;
mod findings;
mod floor_c;
mod golden;
mod loss_estimate;
mod props;
mod real_server;
mod real_server_vectors;
mod reconnect;
mod sim_bounds;
mod sim_corpus;
mod sim_delivery;
mod sim_determinism;
mod sim_disconnect_in_flight;
mod tap_miss;
