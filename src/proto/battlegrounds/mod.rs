//! Battlegrounds: a game-logic UDP protocol with an 8-byte header (big-endian
//! as its reference implementation sends, or little-endian as the first notes
//! said: decided per session, `analysis`'s contract),
//! a command channel, a movement channel and a reliable environment channel
//! whose messages travel in MSG blocks. Its wire format ([`wire`]), its analysis
//! rules ([`analysis`], the contract in its docs), its findings ([`findings`])
//! and its dissector ([`dissect`]). The specification and its notes are beside
//! this file (`battlegrounds-protocol.rst`, `battlegrounds-NOTES.md`; the notes
//! win where they differ).
//!
//! Battlegrounds has no magic: a flow is recognised by its first datagram, an
//! AUTH ([`wire::is_auth`], the registry's probe), and followed after that; a
//! port the user names is checked with [`wire::plausible`].

pub mod analysis;
pub mod dissect;
pub mod findings;
pub mod sim;
pub mod wire;

pub use analysis::{Analyzer, BgSession, INFO, Session, State, Tracker};

/// Battlegrounds in the registry: recognised by a flow's first AUTH.
pub const PROTOCOL: super::Protocol = super::Protocol {
    info: &INFO,
    probe: crate::engine::Probe::WholePayload(wire::is_auth),
    recognition: crate::engine::Recognition::FirstOfFlow,
    tracker: super::MakeTracker::Builtin(|config| Box::new(Tracker::new(config))),
    sim: Some(sim::sim_request),
};
