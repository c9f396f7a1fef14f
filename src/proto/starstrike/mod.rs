//! Starstrike: a client-server UDP game protocol with a 16-bit sequence number
//! per side and a 32-bit acknowledgement bitfield anchored on the sender's own
//! number. Its wire format ([`wire`]), its findings ([`findings`]), its
//! analysis ([`analysis`], whose docs state the contract of every finding) and
//! its dissector ([`dissect`]). The specification and its notes are beside this
//! file (`starstrike-protocol.md`, `starstrike-NOTES.md`; the notes win).

pub mod analysis;
pub mod dissect;
pub mod findings;
pub mod sim;
pub mod wire;

pub use analysis::{Analyzer, INFO, Session, State, StrsSession, Tracker};

/// Starstrike in the registry: recognised by its magic "STRS" on any port.
pub const PROTOCOL: super::Protocol = super::Protocol {
    info: &INFO,
    probe: crate::engine::Probe::Payload(wire::is_starstrike),
    recognition: crate::engine::Recognition::EveryDatagram,
    tracker: super::MakeTracker::Builtin(|config| Box::new(Tracker::new(config))),
    sim: Some(sim::sim_request),
};
