//! lwarscope: an analyzer and dissector for UDP game protocols (lwar,
//! Starstrike, Battlegrounds, Vessel, and protocols described in a file).
//!
//! The crate is layered, and data flows one way; a layer imports only the
//! layers before it:
//!
//! ```text
//! capture  ->  engine  <-  proto/<name>/  ->  run  ->  report  ->  command / tui  ->  main.rs
//! (frames,     (sessions,   (each protocol's  (the     (what      (what the binary
//!  datagrams)   findings)    wire and rules)   loop)    users      calls: outputs
//!                                                       read)      driven by the loop)
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
//! - [`run`] is the run loop, one for every output: it reads the inputs (a
//!   capture source, datagrams in memory), on one thread or two, and feeds
//!   each datagram to a [`run::Consumer`] (the analysis an output drives);
//!   fleet runs of many files, the engine's options, the progress bar.
//! - [`report`] holds the renderers (tables, packet lines, JSON, Parquet,
//!   statistics, `check`'s verdicts): they consume what the engine produces,
//!   through the registry's dissectors; nothing outside [`proto`] names a
//!   protocol's types.
//! - [`command`] is what the binary calls for `-r`/`-i` and `check`: the
//!   options checked against each other, the renderers chosen, and the run
//!   loop driven into them; [`tui`] is the terminal UI's side of the same
//!   loop (it reads the report's display filter and timeline).
//! - [`text`] escapes what comes from the wire or the user for a terminal;
//!   [`fuzzing`] holds the fuzz targets' entry points.

pub mod capture;
pub mod command;
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
