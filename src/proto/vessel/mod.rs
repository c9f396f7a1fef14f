//! Vessel, as its project sends it: the Vessel - Environment protocol of LSFN,
//! one proto3 message per UDP datagram (`protocols/vessel.proto`), the
//! environment on UDP port 39461. Its wire format ([`wire`]: prost's derived
//! messages and a field walk on prost's primitives), its findings
//! ([`findings`]), its analysis ([`analysis`], whose docs state the contract of
//! every finding), its dissector ([`dissect`]) and. The
//! specification and its notes are beside this file (`vessel-protocol.md`,
//! `vessel-NOTES.md`; the notes win).
//!
//! **Recognition.** A protobuf message carries no magic: any bytes are the
//! start of some message, so content alone cannot tell a Vessel datagram from
//! another protocol's. Vessel takes the datagrams to or from UDP port 39461
//! (and only those: the probe checks the port, whatever the bytes, so a
//! malformed packet there is Vessel's malformed packet); another port is
//! decoded as Vessel with `-d udp.port==N,vessel`. Within a session, which
//! side is the environment is told by the port, else by content
//! ([`wire::classify`]). The fixed-layout example `protocols/vessel.ksy`
//! (protocol `vessel_fixed`, port 7600) is not this format.

pub mod analysis;
pub mod dissect;
pub mod findings;
pub mod sim;
pub mod wire;

pub use analysis::{Analyzer, INFO, Session, State, Tracker, VesselSession};

/// Vessel in the registry: the datagrams of UDP port 39461.
pub const PROTOCOL: super::Protocol = super::Protocol {
    info: &INFO,
    probe: crate::engine::Probe::Mark(crate::engine::Mark {
        offset: 0,
        magic: &[],
        port: Some(wire::PORT),
    }),
    recognition: crate::engine::Recognition::EveryDatagram,
    tracker: super::MakeTracker::Builtin(|config| Box::new(Tracker::new(config))),
    sim: Some(sim::sim_request),
};
