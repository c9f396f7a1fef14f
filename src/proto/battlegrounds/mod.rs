//! Battlegrounds: a game-logic UDP protocol with an 8-byte little-endian header,
//! a command channel, a movement channel and a reliable environment channel
//! whose messages travel in MSG blocks. Its wire format ([`wire`]). The
//! specification and its notes are beside this file
//! (`battlegrounds-protocol.rst`, `battlegrounds-NOTES.md`; the notes win).

pub mod findings;
pub mod wire;
