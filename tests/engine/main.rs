//! The engine across protocols: flows bound to their dissector, the two-thread
//! pipeline, loss estimates against the simulators.
//!
//! One test binary for the area (run it with `cargo test --test engine`;
//! one module with `cargo test --test engine MODULE::`).

mod flow_binding;
mod pipeline;
mod protocol_loss;
