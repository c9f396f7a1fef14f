//! lwarscope: an analyzer and dissector for the lwar UDP game protocol.
//!
//! The crate is layered, and data flows one way:
//!
//! ```text
//! capture  ->  codec  ->  track  ->  report / tui
//! (frames)    (bytes)    (state)     (what users read)
//! ```
//!
//! - [`codec`] is the wire format: zero-copy views over bytes, owned
//!   representations that encode back, and precise decode errors. No I/O.
//! - [`capture`] turns libpcap frames (files or live interfaces) into UDP
//!   datagrams whose payload the codec recognises.
//! - [`sim`] runs lwar peers over a fault-injecting network and knows the truth.
//! - [`track`] follows sessions, sequence numbers and acks, and raises findings.
//! - [`report`] and [`tui`] only consume what the tracker produces.

pub mod capture;
pub mod engine;
pub mod fuzzing;
pub mod proto;
pub mod report;
pub mod text;
pub mod tui;

/// The real-server vectors, for the crate's own tests (one reader, shared with the
/// integration tests and benches).
#[cfg(test)]
#[path = "../tests/common/vectors.rs"]
pub(crate) mod test_vectors;
