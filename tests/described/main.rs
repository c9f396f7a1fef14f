//! Described protocols (.ksy and protobuf descriptions): loading, captures, the command
//! line and the cross-check against native decoders.
//!
//! One test binary for the area (run it with `cargo test --test described`;
//! one module with `cargo test --test described MODULE::`).

#[path = "../common/mod.rs"]
mod common;
// The counting allocator (per thread, so other tests do not disturb it), for
// `protobuf::the_hot_path_allocates_nothing`, which uses the module's own
// fixtures; the other hot-path tests are in `tests/no_alloc/`.
#[path = "../counting_alloc/mod.rs"]
mod counting_alloc;
#[path = "../vessel_common/mod.rs"]
mod vessel_common;

mod captures;
mod cli;
mod crosscheck;
mod ksy;
mod protobuf;
