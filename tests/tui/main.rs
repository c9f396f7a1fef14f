//! The terminal UI, driven in tmux.
//!
//! One test binary for the area (run it with `cargo test --test tui`;
//! one module with `cargo test --test tui MODULE::`).

mod protobuf;
mod tmux;
