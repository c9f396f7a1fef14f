//! lwar: the first protocol. Its wire format ([`wire`]), its analysis rules, and
//! its simulator ([`sim`]). The specification and its notes are beside this file
//! (`lwar-network-protocol.txt`, `NOTES.md`).

pub mod analysis;
pub mod dissect;
pub mod findings;
pub mod sim;
pub mod wire;

pub use analysis::{Analyzer, INFO, LwarSession, Player, Session, State, Tracker};

/// lwar in the registry: recognised by its appId on any port.
pub const PROTOCOL: super::Protocol = super::Protocol {
    info: &INFO,
    probe: crate::engine::Probe::Payload(wire::is_lwar),
    recognition: crate::engine::Recognition::EveryDatagram,
    tracker: super::MakeTracker::Builtin(|config| Box::new(Tracker::new(config))),
    sim: None,
};
