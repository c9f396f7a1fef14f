//! The hot paths allocate nothing per packet: each test counts its own thread's
//! allocations through the counting global allocator this binary installs.
//! The two-thread pipeline's test counts every thread's and sets an
//! environment variable, so it is a binary of its own (`tests/pipeline_alloc.rs`),
//! as is `tests/sigpipe.rs`, which changes the process's SIGPIPE action.
//!
//! One test binary for the area (run it with `cargo test --test no_alloc`;
//! one module with `cargo test --test no_alloc MODULE::`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../counting_alloc/mod.rs"]
mod counting_alloc;

mod analysis;
mod battlegrounds;
mod capture;
mod described;
mod fields;
mod lwar_analysis;
mod lwar_wire;
mod reassembly_bounds;
mod report;
mod starstrike;
mod vessel;
