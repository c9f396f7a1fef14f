//! lwarscope: an analyzer and dissector for UDP game protocols (lwar,
//! Starstrike, Battlegrounds, Vessel, and protocols described in a file).
//!
//! The crate is layered, and data flows one way:
//!
//! ```text
//! capture  ->  engine  <-  proto/<name>/  ->  report / tui
//! (frames,     (sessions,   (each protocol's    (what users read)
//!  datagrams)   findings)    wire and rules)
//! ```
//!
//! - [`capture`] turns frames (capture files read in place, streams, live
//!   interfaces through libpcap) into UDP datagrams; it knows no game
//!   protocol.
//! - [`engine`] recognises each datagram's protocol, follows sessions,
//!   sequence numbers, acks and split messages with one reliability core, and
//!   raises registered findings. It also holds the vocabulary protocols and
//!   outputs meet at: [`engine::dissect::Dissector`], [`engine::field`] (the
//!   registered fields) and [`engine::out`] (where text is written).
//! - [`proto`] plugs each protocol into the engine: its wire format, its
//!   analysis rules, its dissector and its simulator, one folder each; the
//!   registry ([`proto::REGISTRY`]) is the only list of them.
//! - [`report`] (tables, packet lines, JSON, Parquet, `check`) and [`tui`]
//!   consume what the engine produces, through the registry's dissectors;
//!   nothing outside [`proto`] names a protocol's types.
//! - [`text`] escapes what comes from the wire or the user for a terminal;
//!   [`fuzzing`] holds the fuzz targets' entry points.

pub mod capture;
pub mod engine;
pub mod fuzzing;
pub mod proto;
pub mod report;
pub mod run;
pub mod text;
pub mod tui;

/// The real-server vectors, for the crate's own tests (one reader, shared with the
/// integration tests and benches).
#[cfg(test)]
#[path = "../tests/common/vectors.rs"]
pub(crate) mod test_vectors;
